/**
 * `soniq/dashboard/fastify`: the dashboard as a fastify plugin —
 * `await app.register(toFastify(dashboard), { prefix: "/admin/jobs" })` with the same `basePath`.
 * Needs no fastify at run time: it declares the few members it calls.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { DashboardHandler } from "../handler.js";
import { sendResponse, toRequest } from "./node.js";

/** The part of a fastify instance the plugin uses. */
export interface FastifyLike {
  addContentTypeParser(
    type: string | RegExp,
    options: { parseAs: "buffer" },
    parser: (req: unknown, body: Buffer, done: (err: Error | null, body?: unknown) => void) => void,
  ): void;
  route(options: {
    method: string[];
    url: string;
    handler: (
      request: { raw: IncomingMessage; url: string; body?: unknown },
      reply: { hijack(): void; raw: ServerResponse },
    ) => Promise<void>;
  }): void;
}

/** A fastify plugin serving the dashboard under the prefix it is registered with. */
export function toFastify(
  dashboard: DashboardHandler,
): (app: FastifyLike, options: unknown) => Promise<void> {
  return async (app) => {
    // Hand every body through untouched: the dashboard reads it itself.
    app.addContentTypeParser(/^.*$/, { parseAs: "buffer" }, (_req, body, done) => done(null, body));
    const handler = async (
      request: { raw: IncomingMessage; url: string; body?: unknown },
      reply: { hijack(): void; raw: ServerResponse },
    ): Promise<void> => {
      reply.hijack();
      // fastify has read the body already: bytes (the parser above), or what its own JSON and
      // text parsers made of it.
      const raw = request.body;
      const body =
        raw instanceof Uint8Array || typeof raw === "string"
          ? raw
          : raw === undefined || raw === null
            ? ""
            : JSON.stringify(raw);
      const response = await dashboard(toRequest(request.raw, request.url, body));
      await sendResponse(response, reply.raw);
    };
    const method = ["GET", "POST", "PATCH", "DELETE"];
    app.route({ method, url: "/", handler });
    app.route({ method, url: "/*", handler });
  };
}
