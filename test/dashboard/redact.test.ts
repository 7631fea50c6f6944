/**
 * What leaves the process: `redact` applies to details, downloads and errors; `hideArgs` leaves
 * arguments out of lists and details until asked for; the audit records refused writes too.
 * Calls the Fetch handler directly (no server).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboard } from "../../src/dashboard/index.js";
import type { Soniq } from "../../src/index.js";
import type { DashboardActionEvent } from "../../src/observability/events.js";
import { type Seeded, seed, seededInstance } from "./seed.js";

let soniq: Soniq;
let ids: Seeded;
beforeAll(async () => {
  soniq = seededInstance({ databaseUrl: "memory:" }, 1024);
  ids = await seed(soniq);
}, 30_000);
afterAll(() => soniq.close());

const dashboard = () =>
  createDashboard({
    soniq,
    auth: () => ({ name: "ada" }),
    hideArgs: true,
    redact: {
      args: () => ({ redacted: true }),
      result: () => "[result redacted]",
      error: () => "[error redacted]",
    },
  });

async function json<T>(path: string): Promise<T> {
  return (await (await dashboard()(new Request(`http://h${path}`))).json()) as T;
}

describe("dashboard redaction", () => {
  it("dashboard redaction › hideArgs › lists and details leave arguments out until showArgs=1", async () => {
    const list = await json<{ jobs: Array<{ args: { hidden: boolean; json: string } }> }>(
      "/api/jobs",
    );
    expect(list.jobs.every((j) => j.args.hidden && j.args.json === "")).toBe(true);
    const hidden = await json<{ args: { hidden: boolean } }>(`/api/jobs/${ids.done}`);
    expect(hidden.args.hidden).toBe(true);
    const shown = await json<{ args: { hidden: boolean; json: string } }>(
      `/api/jobs/${ids.done}?showArgs=1`,
    );
    expect(JSON.parse(shown.args.json)).toEqual({ redacted: true });
  });

  it("dashboard redaction › redact hooks › applied to results, errors and downloads", async () => {
    const done = await json<{ result: { json: string } }>(`/api/jobs/${ids.done}`);
    expect(JSON.parse(done.result.json)).toBe("[result redacted]");
    const retried = await json<{ lastError: string }>(`/api/jobs/${ids.retried}`);
    expect(retried.lastError).toBe("[error redacted]");
    expect(await json<unknown>(`/api/jobs/${ids.done}/args`)).toEqual({ redacted: true });
    expect(await json<unknown>(`/api/jobs/${ids.done}/result`)).toBe("[result redacted]");
  });

  it("dashboard redaction › a refused write › is audited once with its refusal", async () => {
    const events: DashboardActionEvent[] = [];
    const off = soniq.events.on("dashboard_action", (e) => {
      events.push({ ...e });
    });
    const response = await dashboard()(
      new Request(`http://h/api/jobs/${ids.queued}/cancel`, { method: "POST" }),
    );
    off();
    expect(response.status).toBe(403);
    expect(events).toMatchObject([
      { user: "ada", action: "jobs.cancel", ids: [ids.queued], outcome: "CSRF" },
    ]);
  });
});
