/**
 * Node's `http` request and response to and from Fetch-API `Request` / `Response`: what the
 * express and fastify adapters and `soniq dashboard` stand on. The URL keeps the full original
 * path, so the handler sees its base path whatever mounted it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";

/** A Fetch `Request` for a Node request; `originalUrl` overrides `req.url` (express mounts). */
export function toRequest(req: IncomingMessage, originalUrl?: string, body?: unknown): Request {
  const secure = (req.socket as { encrypted?: boolean }).encrypted === true;
  const host = req.headers.host ?? "localhost";
  const url = new URL(originalUrl ?? req.url ?? "/", `${secure ? "https" : "http"}://${host}`);
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(key, v);
  }
  const method = req.method ?? "GET";
  const init: RequestInit & { duplex?: "half" } = { method, headers };
  if (method !== "GET" && method !== "HEAD") {
    if (typeof body === "string" || body instanceof Uint8Array) init.body = body;
    else if (body !== undefined && body !== null) init.body = JSON.stringify(body);
    else {
      init.body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
      init.duplex = "half";
    }
  }
  return new Request(url, init);
}

/** Writes a Fetch `Response` to a Node response (streamed). */
export async function sendResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    if (key === "set-cookie") return;
    headers[key] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve));
  }
  res.end();
}
