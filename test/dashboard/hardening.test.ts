/**
 * The dashboard under attack (issue 26): DNS rebinding refused for reads and writes when it runs
 * without credentials (only loopback and `allowedHosts` Host values answered); every SoniqError
 * code answered with its own status (4xx, 5xx only for the server's own failures); an invalid
 * queue name on a queue write is a 400. In-process HTTP over the memory backend.
 */

import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVER_SIDE_CODES } from "../../src/dashboard/error-status.js";
import { createDashboard, type DashboardSource } from "../../src/dashboard/index.js";
import { Soniq, SoniqError, type SoniqErrorCode } from "../../src/index.js";
import { type Served, serve } from "../helpers/dashboard.js";
import { waitFor } from "../helpers/wait.js";

/** An HTTP request with any Host header (fetch will not send one it did not derive). */
function call(
  root: string,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string; setCookie: string[] }> {
  const url = new URL(path, root);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers },
      (res) => {
        let body = "";
        res.on("data", (d: Buffer) => {
          body += d.toString();
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body,
            setCookie: res.headers["set-cookie"] ?? [],
          }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

function code(body: string): string {
  return (JSON.parse(body) as { error: { code: string } }).error.code;
}

let soniq: Soniq;
let failedId: string;
beforeAll(async () => {
  soniq = new Soniq({ databaseUrl: "memory:", logLevel: "silent" });
  soniq.job({ name: "mail.send", queue: "mail", handler: async () => null });
  soniq.job({
    name: "mail.fail",
    queue: "failing",
    maxAttempts: 1,
    handler: async () => {
      throw new Error(`cannot open ${process.cwd()}/config/mail.json`);
    },
  });
  await soniq.enqueue("mail.send", {}, { delay: 3600 });
  failedId = await soniq.enqueue("mail.fail", {});
  const worker = soniq.worker({ queues: ["failing"], pollInterval: 0.05 });
  await worker.start();
  await waitFor(
    async () => (await soniq.deadLetters.get(failedId)) !== null,
    20_000,
    "the failing job dead-lettered",
  );
  await worker.stop();
});
afterAll(() => soniq.close());

describe("dashboard › DNS rebinding", () => {
  let served: Served;
  let port: string;
  beforeAll(async () => {
    served = await serve("fetch", createDashboard({ soniq, auth: "none", access: "all" }));
    port = new URL(served.root).port;
  });
  afterAll(() => served.close());

  /** A loopback session's cookie and CSRF token (what the attacker's page would read). */
  async function session(): Promise<{ cookie: string; token: string }> {
    const me = await call(served.root, "GET", "api/me", { host: `127.0.0.1:${port}` });
    expect(me.status).toBe(200);
    return {
      cookie: (me.setCookie[0] as string).split(";")[0] as string,
      token: (JSON.parse(me.body) as { csrfToken: string }).csrfToken,
    };
  }

  it("dashboard › auth none, Host evil.example:PORT › reads and the page refused 403 HOST_NOT_ALLOWED", async () => {
    for (const path of ["", "api/me", "api/jobs", "api/queues", "static/x.js"]) {
      const response = await call(served.root, "GET", path, { host: `evil.example:${port}` });
      expect(response.status, path).toBe(403);
      expect(code(response.body), path).toBe("HOST_NOT_ALLOWED");
    }
  });

  it("dashboard › auth none, Host evil.example:PORT › a same-origin write with the CSRF token refused, nothing changed", async () => {
    const { cookie, token } = await session();
    const write = await call(served.root, "POST", "api/queues/mail/pause", {
      host: `evil.example:${port}`,
      origin: `http://evil.example:${port}`,
      cookie,
      "x-soniq-csrf": token,
    });
    expect(write.status).toBe(403);
    expect(code(write.body)).toBe("HOST_NOT_ALLOWED");
    expect((await soniq.queues.list()).find((q) => q.name === "mail")?.paused).toBe(false);
  });

  it("dashboard › auth none, loopback Host › localhost, 127.0.0.1 and [::1] answered; a write applies", async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, "LocalHost"]) {
      const response = await call(served.root, "GET", "api/queues", { host });
      expect(response.status, host).toBe(200);
    }
    const { cookie, token } = await session();
    const write = await call(served.root, "POST", "api/queues/mail/pause", {
      host: `localhost:${port}`,
      origin: `http://localhost:${port}`,
      cookie,
      "x-soniq-csrf": token,
    });
    expect(write.status).toBe(200);
    expect((await soniq.queues.resume("mail")).paused).toBe(false);
  });

  it("dashboard › allowedHosts › listed hosts (with or without a port) answered, others refused; auth function alone checks no Host", async () => {
    const listed = await serve(
      "fetch",
      createDashboard({
        soniq,
        auth: "none",
        allowedHosts: ["jobs.internal", "ops.internal:8443"],
      }),
    );
    try {
      const status = async (host: string) =>
        (await call(listed.root, "GET", "api/queues", { host })).status;
      expect(await status("jobs.internal:6161")).toBe(200);
      expect(await status("jobs.internal")).toBe(200);
      expect(await status("ops.internal:8443")).toBe(200);
      expect(await status("ops.internal:8444")).toBe(403);
      expect(await status("evil.example")).toBe(403);
      expect(await status("127.0.0.1")).toBe(200);
    } finally {
      await listed.close();
    }
    const withAuth = await serve("fetch", createDashboard({ soniq, auth: () => null }));
    try {
      // Credentials protect it: the Host is not checked (401, not 403).
      expect(
        (await call(withAuth.root, "GET", "api/queues", { host: "evil.example" })).status,
      ).toBe(401);
    } finally {
      await withAuth.close();
    }
    expect(() => createDashboard({ soniq, auth: "none", allowedHosts: ["not a host"] })).toThrow(
      /INVALID_OPTION/,
    );
  });
});

describe("dashboard › error codes", () => {
  /** Every code of the `SoniqErrorCode` union, read from src/errors.ts. */
  const ALL_CODES = [
    ...readFileSync(new URL("../../src/errors.ts", import.meta.url), "utf8").matchAll(
      /^\s*\|\s*"([A-Z_]+)"/gm,
    ),
  ].map((m) => m[1] as SoniqErrorCode);

  it("dashboard › every SoniqError code › answered with its code: 4xx, 5xx only for the listed server-side codes", async () => {
    expect(ALL_CODES.length).toBeGreaterThan(25);
    expect([...SERVER_SIDE_CODES].sort()).toEqual(
      [
        "UNSUPPORTED",
        "SCHEMA_NOT_READY",
        "CLOSED",
        "DATABASE_UNREACHABLE",
        "DATABASE_NOT_FOUND",
        "DATABASE_AUTH",
        "NOT_A_DATABASE",
        "DATABASE_ERROR",
        "INVALID_DATABASE_URL",
        "DUPLICATE_JOB",
        "DUPLICATE_SCHEDULE",
        "WORKER_START",
        "MODULE_LOAD",
        "FILE_NOT_FOUND",
        "UNEXPECTED",
      ].sort(),
    );
    let failure: unknown = null;
    const source: DashboardSource = {
      jobs: soniq.jobs,
      deadLetters: soniq.deadLetters,
      queues: {
        list: async () => {
          throw failure;
        },
        history: (o) => soniq.queues.history(o),
        flow: (o) => soniq.queues.flow(o),
        pause: (n, o) => soniq.queues.pause(n, o),
        resume: (n, o) => soniq.queues.resume(n, o),
        set: (n, s, o) => soniq.queues.set(n, s, o),
      },
      schedules: soniq.schedules,
      remote: soniq.remote,
      flows: soniq.flows,
      batches: soniq.batches,
      workers: () => soniq.workers(),
      logger: soniq.logger,
      eventBus: soniq.eventBus,
    };
    const dashboard = createDashboard({ soniq: source, auth: "none" });
    for (const each of ALL_CODES) {
      failure = new SoniqError(each, "postgres://secret@db:5432 said no");
      const response = await dashboard(new Request("http://127.0.0.1/api/queues"));
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code, each).toBe(each);
      if (SERVER_SIDE_CODES.includes(each)) {
        expect(response.status, each).toBeGreaterThanOrEqual(500);
        // The server's own failure: its text stays in the log.
        expect(body.error.message, each).not.toContain("secret");
      } else {
        expect(response.status, each).toBeGreaterThanOrEqual(400);
        expect(response.status, each).toBeLessThan(500);
      }
    }
  });

  it("dashboard › an invalid queue name on pause, resume and PATCH › 400 INVALID_ENQUEUE_OPTION", async () => {
    const dashboard = createDashboard({ soniq, auth: "none", access: "all", csrf: "none" });
    for (const [method, path, body] of [
      ["POST", "api/queues/bad%20queue!/pause", undefined],
      ["POST", "api/queues/bad%20queue!/resume", undefined],
      ["PATCH", "api/queues/bad%20queue!", JSON.stringify({ maxRunning: 2 })],
    ] as const) {
      const response = await dashboard(
        new Request(`http://127.0.0.1/${path}`, {
          method,
          ...(body === undefined ? {} : { body, headers: { "content-type": "application/json" } }),
        }),
      );
      expect(response.status, `${method} ${path}`).toBe(400);
      expect(code(await response.text()), `${method} ${path}`).toBe("INVALID_ENQUEUE_OPTION");
    }
  });
});

describe("dashboard › stack traces", () => {
  async function lastError(stackTraces: boolean | undefined): Promise<string> {
    const dashboard = createDashboard({
      soniq,
      auth: "none",
      ...(stackTraces === undefined ? {} : { stackTraces }),
    });
    const response = await dashboard(new Request(`http://127.0.0.1/api/dead-letter/${failedId}`));
    expect(response.status).toBe(200);
    return ((await response.json()) as { lastError: string }).lastError;
  }

  it("dashboard › stackTraces default › the message without frames or the server's paths", async () => {
    const text = await lastError(undefined);
    expect(text).toContain("cannot open config/mail.json");
    expect(text).toMatch(/\[\d+ stack frames? hidden\]/);
    expect(text).not.toMatch(/^\s+at /m);
    expect(text).not.toContain(process.cwd());
  });

  it("dashboard › stackTraces true › frames shown with paths relative to the cwd", async () => {
    const text = await lastError(true);
    expect(text).toMatch(/^\s+at .*test\/dashboard\/hardening\.test\.ts:\d+/m);
    expect(text).not.toContain(process.cwd());
    expect(text).not.toContain("hidden]");
  });
});
