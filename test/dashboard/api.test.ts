/**
 * The dashboard's HTTP API through every adapter (bare Fetch on Node, express, fastify, hono),
 * mounted at `/` and at a deep prefix: auth matrix (401 / 403 / per-action map / CSRF), audit,
 * truncation with the full value as a download, and assets loading relative to the base path.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboard, type DashboardAccess } from "../../src/dashboard/index.js";
import type { Soniq } from "../../src/index.js";
import type { DashboardActionEvent } from "../../src/observability/events.js";
import { ADAPTERS, DashboardClient, type Served, serve } from "../helpers/dashboard.js";
import { type Seeded, seed, seededInstance } from "./seed.js";

const RESULT_BYTES = 300 * 1024;
const USERS: Record<string, { name: string; access: DashboardAccess }> = {
  "token-admin": { name: "ada", access: "all" },
  "token-viewer": { name: "vic", access: "read-only" },
  "token-canceller": { name: "cal", access: { "jobs.cancel": true } },
};

let soniq: Soniq;
let ids: Seeded;
const audits: DashboardActionEvent[] = [];

beforeAll(async () => {
  soniq = seededInstance({ databaseUrl: "memory:" }, RESULT_BYTES);
  ids = await seed(soniq);
  soniq.events.on("dashboard_action", (e) => {
    audits.push({ ...e });
  });
}, 30_000);
afterAll(() => soniq.close());

function dashboardAt(basePath: string) {
  return createDashboard({
    soniq,
    basePath,
    auth: (req) => {
      const token = req.headers.get("authorization")?.replace(/^Bearer /, "") ?? "";
      if (token === "token-auth-throws") throw new Error("the session store is down");
      if (token === "token-access-throws") return { name: "broken" };
      const user = USERS[token];
      return user ? { name: user.name } : null;
    },
    access: (user) => {
      if (user.name === "broken") throw new Error("the role lookup is down");
      return Object.values(USERS).find((u) => u.name === user.name)?.access ?? "read-only";
    },
    maxPreviewBytes: 64 * 1024,
  });
}

/** Every write the API offers, as [method, path, body]. */
function writes(): Array<[string, string, unknown]> {
  return [
    ["POST", `api/jobs/${ids.queued}/cancel`, undefined],
    ["POST", `api/jobs/${ids.done}/retry`, undefined],
    ["DELETE", `api/jobs/${ids.done}`, undefined],
    ["POST", "api/jobs/bulk", { action: "retry", ids: [ids.done] }],
    ["POST", `api/dead-letter/${ids.dead}/replay`, undefined],
    ["DELETE", `api/dead-letter/${ids.dead}`, undefined],
    ["POST", "api/dead-letter/bulk", { action: "delete", ids: [ids.dead] }],
    ["POST", "api/queues/default/pause", undefined],
    ["POST", "api/queues/default/resume", undefined],
    ["PATCH", "api/queues/default", { maxRunning: 3 }],
  ];
}

const READS = [
  "",
  "api/me",
  "api/overview",
  "api/jobs",
  "api/dead-letter",
  "api/queues",
  "api/workers",
];

for (const kind of ADAPTERS) {
  for (const basePath of ["/", "/deep/prefix/admin"]) {
    describe(`dashboard API › ${kind} at ${basePath}`, () => {
      let served: Served;
      beforeAll(async () => {
        served = await serve(kind, dashboardAt(basePath));
      });
      afterAll(() => served.close());

      it("dashboard API › no credentials › 401 on every read and write", async () => {
        const anon = new DashboardClient(served.root);
        for (const path of READS) expect((await anon.fetch("GET", path)).status, path).toBe(401);
        for (const [method, path, body] of writes()) {
          expect((await anon.fetch(method, path, body)).status, `${method} ${path}`).toBe(401);
        }
      });

      it("dashboard API › the page › loads its hashed assets relative to the base path with a strict CSP", async () => {
        const client = new DashboardClient(served.root, { authorization: "Bearer token-viewer" });
        const page = await client.fetch("GET", "");
        expect(page.status).toBe(200);
        const csp = page.headers.get("content-security-policy") ?? "";
        expect(csp).toContain("script-src 'self'");
        expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
        const html = await page.text();
        const assets = [...html.matchAll(/(?:src|href)="(static\/[^"]+)"/g)].map(
          (m) => m[1] as string,
        );
        expect(assets).toHaveLength(2);
        for (const asset of assets) {
          const response = await client.fetch("GET", asset);
          expect(response.status, asset).toBe(200);
          expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(100);
        }
        expect(html).not.toMatch(/<script>|<style>| on[a-z]+=/);
      });

      it("dashboard API › HEAD › answered like GET (status, type) without a body", async () => {
        const client = new DashboardClient(served.root, { authorization: "Bearer token-viewer" });
        for (const path of ["", "api/queues"]) {
          const get = await client.fetch("GET", path);
          const head = await client.fetch("HEAD", path);
          expect(head.status, path).toBe(200);
          expect(head.headers.get("content-type"), path).toBe(get.headers.get("content-type"));
          expect((await head.arrayBuffer()).byteLength, path).toBe(0);
        }
        expect((await client.fetch("HEAD", "api/nothing-here")).status).toBe(404);
      });

      it("dashboard API › read-only user › reads work and every write is 403", async () => {
        const viewer = new DashboardClient(served.root, { authorization: "Bearer token-viewer" });
        expect((await viewer.login()).actions).toEqual([]);
        for (const path of READS) expect((await viewer.fetch("GET", path)).status, path).toBe(200);
        for (const [method, path, body] of writes()) {
          expect((await viewer.fetch(method, path, body)).status, `${method} ${path}`).toBe(403);
        }
      });

      it("dashboard API › per-action map › grants cancel only", async () => {
        const cal = new DashboardClient(served.root, { authorization: "Bearer token-canceller" });
        expect((await cal.login()).actions).toEqual(["jobs.cancel"]);
        expect((await cal.fetch("POST", `api/jobs/${ids.done}/retry`)).status).toBe(403);
        expect((await cal.fetch("POST", "api/queues/default/pause")).status).toBe(403);
        // Cancelling a done job is refused by the admin API (409), not by access.
        expect((await cal.fetch("POST", `api/jobs/${ids.done}/cancel`)).status).toBe(409);
      });

      it("dashboard API › cross-site write › 403 without the CSRF token or from another origin", async () => {
        const admin = new DashboardClient(served.root, { authorization: "Bearer token-admin" });
        await admin.login();
        const noToken = await admin.fetch("POST", "api/queues/default/pause", undefined, {
          "x-soniq-csrf": "",
        });
        expect(noToken.status).toBe(403);
        expect(((await noToken.json()) as { error: { code: string } }).error.code).toBe("CSRF");
        const evil = await admin.fetch("POST", "api/queues/default/pause", undefined, {
          origin: "https://evil.example",
        });
        expect(evil.status).toBe(403);
      });

      it("dashboard API › admin writes › each is applied and audited once with user, action and ids", async () => {
        const admin = new DashboardClient(served.root, { authorization: "Bearer token-admin" });
        await admin.login();
        const before = audits.length;
        const paused = await admin.fetch("POST", "api/queues/later/pause");
        expect(paused.status).toBe(200);
        expect(((await paused.json()) as { paused: boolean }).paused).toBe(true);
        const resumed = await admin.fetch("POST", "api/queues/later/resume");
        expect(((await resumed.json()) as { paused: boolean }).paused).toBe(false);
        expect(audits.slice(before)).toMatchObject([
          { user: "ada", action: "queues.pause", ids: ["later"], outcome: "ok" },
          { user: "ada", action: "queues.resume", ids: ["later"], outcome: "ok" },
        ]);
      });

      it("dashboard API › a queue write to a name nothing knows › 404 NOT_FOUND; ?create=true configures it", async () => {
        const admin = new DashboardClient(served.root, { authorization: "Bearer token-admin" });
        await admin.login();
        const typo = await admin.fetch("POST", "api/queues/latr/pause");
        expect(typo.status).toBe(404);
        const body = (await typo.json()) as { error: { code: string; message: string } };
        expect(body.error.code).toBe("NOT_FOUND");
        expect(body.error.message).toContain('did you mean "later"?');
        // The store is shared by every adapter's block: a name of this block's own.
        const fresh = `fresh-${Math.random().toString(36).slice(2, 10)}`;
        const set = await admin.fetch("PATCH", `api/queues/${fresh}`, { maxRunning: 2 });
        expect(set.status).toBe(404);
        const created = await admin.fetch("POST", `api/queues/${fresh}/pause?create=true`);
        expect(created.status).toBe(200);
        expect(((await created.json()) as { paused: boolean }).paused).toBe(true);
      });

      it("dashboard API › PATCH a queue › maxRunning and unclaimableAfter each set alone, the other kept; bad bodies 400", async () => {
        const admin = new DashboardClient(served.root, { authorization: "Bearer token-admin" });
        await admin.login();
        const q = `patch-${Math.random().toString(36).slice(2, 10)}`;
        type Q = { maxRunning: number | null; unclaimableAfter: number | null };
        const patch = (body: unknown) => admin.fetch("PATCH", `api/queues/${q}?create=true`, body);
        const first = await patch({ maxRunning: 3 });
        expect(first.status).toBe(200);
        expect(await first.json()).toMatchObject({ maxRunning: 3, unclaimableAfter: null });
        const second = await patch({ unclaimableAfter: 600 });
        expect(second.status).toBe(200);
        expect((await second.json()) as Q).toMatchObject({ maxRunning: 3, unclaimableAfter: 600 });
        const both = await patch({ maxRunning: null, unclaimableAfter: null });
        expect((await both.json()) as Q).toMatchObject({
          maxRunning: null,
          unclaimableAfter: null,
        });
        for (const body of [
          {},
          { colour: 1 },
          { unclaimableAfter: "1h" },
          { unclaimableAfter: 0 },
        ]) {
          const bad = await patch(body);
          expect(bad.status, `${JSON.stringify(body)} ${await bad.clone().text()}`).toBe(400);
        }
      });

      it("dashboard API › auth or access throwing › 500 with the security headers, and the server still serves", async () => {
        for (const token of ["token-auth-throws", "token-access-throws"]) {
          const client = new DashboardClient(served.root, { authorization: `Bearer ${token}` });
          for (const path of ["", "api/me", "api/jobs", "static/x.js"]) {
            const response = await client.fetch("GET", path);
            if (token === "token-access-throws" && !path.startsWith("api/")) {
              // The page and its assets do not ask `access`.
              expect(response.status, `${token} ${path}`).not.toBe(500);
              continue;
            }
            expect(response.status, `${token} ${path}`).toBe(500);
            expect(response.headers.get("content-security-policy"), path).toContain(
              "default-src 'none'",
            );
            expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
              "INTERNAL",
            );
          }
          const write = await client.fetch("POST", "api/queues/default/pause");
          expect(write.status, `${token} write`).toBe(500);
        }
        const viewer = new DashboardClient(served.root, { authorization: "Bearer token-viewer" });
        expect((await viewer.fetch("GET", "api/me")).status).toBe(200);
      });

      it("dashboard API › a large result › is truncated in the detail and whole in the download", async () => {
        const client = new DashboardClient(served.root, { authorization: "Bearer token-viewer" });
        const detail = (await (await client.fetch("GET", `api/jobs/${ids.done}`)).json()) as {
          result: { json: string; bytes: number; truncated: boolean };
          timeline: Array<{ kind: string }>;
        };
        expect(detail.result.truncated).toBe(true);
        expect(Buffer.byteLength(detail.result.json)).toBeLessThanOrEqual(64 * 1024);
        expect(detail.result.bytes).toBeGreaterThan(RESULT_BYTES);
        const download = await client.fetch("GET", `api/jobs/${ids.done}/result`);
        expect(download.headers.get("content-disposition")).toContain("attachment");
        expect(((await download.json()) as string).length).toBeGreaterThan(RESULT_BYTES);
      });
    });
  }
}
