/**
 * Helpers of the dashboard tests: serve a dashboard handler through one of its adapters (bare
 * Node server, express, fastify, hono) on a free loopback port, and call its API like the page
 * does (cookie + CSRF header).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { toExpress } from "../../src/dashboard/adapters/express.js";
import { toFastify } from "../../src/dashboard/adapters/fastify.js";
import { toHono } from "../../src/dashboard/adapters/hono.js";
import { sendResponse, toRequest } from "../../src/dashboard/adapters/node.js";
import type { DashboardHandler } from "../../src/dashboard/handler.js";

/** The adapters under test. */
/**
 * The bound on one dashboard page's render in Chromium (navigation until its content is visible),
 * in milliseconds. A page renders in well under a second on a quiet machine; on the shared 2-core
 * CI machine one took 4.1 s under a load average of 10, so the bound is 10 s: it still fails a
 * page that hangs or renders a 20 MB result whole.
 */
export const RENDER_BOUND_MS = 10_000;

export const ADAPTERS = ["fetch", "express", "fastify", "hono"] as const;
/** One adapter. */
export type AdapterKind = (typeof ADAPTERS)[number];

/** A served dashboard: its root URL (ends with `/`) and how to stop it. */
export interface Served {
  root: string;
  close(): Promise<void>;
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Serves `dashboard` (built with `basePath`) through `kind`. */
export async function serve(kind: AdapterKind, dashboard: DashboardHandler): Promise<Served> {
  const prefix = dashboard.basePath;
  if (kind === "fastify") {
    const app = Fastify();
    await app.register(toFastify(dashboard), { prefix });
    const origin = await app.listen({ port: 0, host: "127.0.0.1" });
    return { root: `${origin}${prefix}/`, close: () => app.close() };
  }
  let server: Server;
  if (kind === "express") {
    const app = express();
    app.use(express.json());
    app.use(prefix || "/", toExpress(dashboard));
    server = createServer(app);
  } else if (kind === "hono") {
    const app = new Hono();
    app.all(`${prefix}/*`, toHono(dashboard));
    app.all(prefix || "/", toHono(dashboard));
    server = createServer((req, res) => {
      void Promise.resolve(app.fetch(toRequest(req))).then((response) =>
        sendResponse(response, res),
      );
    });
  } else {
    server = createServer((req, res) => {
      void dashboard(toRequest(req)).then((response) => sendResponse(response, res));
    });
  }
  const origin = await listen(server);
  return { root: `${origin}${prefix}/`, close: () => closeServer(server) };
}

/** A client that keeps the CSRF cookie and sends it back with the header, like the page. */
export class DashboardClient {
  private cookie = "";
  private token = "";
  constructor(
    readonly root: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  /** Loads `api/me` (which sets the cookie) and remembers the token. */
  async login(): Promise<{ user: string; actions: string[] }> {
    const response = await this.fetch("GET", "api/me");
    const me = (await response.json()) as { user: string; actions: string[]; csrfToken: string };
    this.token = me.csrfToken;
    return me;
  }

  /** A request relative to the root, with cookie and CSRF header. */
  async fetch(
    method: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { ...this.headers, ...extra };
    if (this.cookie) headers.cookie = this.cookie;
    if (method !== "GET" && this.token && extra["x-soniq-csrf"] === undefined)
      headers["x-soniq-csrf"] = this.token;
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(new URL(path, this.root), {
      method,
      headers,
      redirect: "manual",
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const set = response.headers.getSetCookie().find((c) => c.startsWith("soniq_csrf="));
    if (set) this.cookie = set.split(";")[0] as string;
    return response;
  }
}
