/**
 * The dashboard's schedule, remote-job and live bulk routes on a SQLite file and PostgreSQL: what
 * they show, that every write is gated by `access` (403 for read-only and for an action the map
 * does not grant), CSRF-checked and audited once, that frozen remote jobs reach the overview and
 * remote phases the job timeline, and that a live bulk operation reports its totals while it runs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboard, type DashboardAccess } from "../../src/dashboard/index.js";
import { Soniq } from "../../src/index.js";
import type { DashboardActionEvent } from "../../src/observability/events.js";
import { DashboardClient, type Served, serve } from "../helpers/dashboard.js";
import { availableKinds, SHARED_KINDS, useBackends } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

const available = await availableKinds(SHARED_KINDS);

const USERS: Record<string, { name: string; access: DashboardAccess }> = {
  "token-admin": { name: "ada", access: "all" },
  "token-viewer": { name: "vic", access: "read-only" },
  "token-pauser": { name: "pat", access: { "schedules.pause": true } },
};

/** A frozen remote job (phase written as a worker would: claim, submitting, freeze). */
async function frozenJob(soniq: Soniq): Promise<string> {
  const id = await soniq.enqueue("media.render", {});
  const backend = await soniq.backend();
  await backend.workerRegister({
    id: "w",
    hostname: "h",
    pid: 1,
    queues: ["remote"],
    concurrency: 1,
  });
  const [job] = await backend.jobClaim({ workerId: "w", queues: ["remote"], limit: 1 });
  const owner = { workerId: "w", claimToken: job?.claimToken as string };
  await backend.submissions.submissionMarkSubmitting({
    jobId: id,
    owner,
    name: "media.render",
    queue: "remote",
  });
  await backend.submissions.submissionFreeze({ jobId: id, owner, reason: "deadline" });
  return id;
}

for (const kind of SHARED_KINDS) {
  describe.skipIf(!available.has(kind))(`dashboard schedules and remote jobs › ${kind}`, () => {
    const stores = useBackends(kind, { schemaPrefix: "soniq_dash_sr" });
    let soniq: Soniq;
    let served: Served;
    const audits: DashboardActionEvent[] = [];

    beforeAll(async () => {
      soniq = new Soniq({ logLevel: "silent", ...stores.freshAddress() });
      const report = soniq.job({ name: "report.send", handler: async () => "sent" });
      soniq.job({ name: "media.render", queue: "remote", handler: async () => null });
      soniq.job({ name: "bulk.noop", queue: "bulk", handler: async () => null });
      soniq.schedule({
        id: "reports.nightly",
        job: report,
        cron: "30 2 * * *",
        timezone: "Europe/Paris",
        args: {},
      });
      soniq.schedule({ id: "reports.minutely", job: report, every: 60, args: {} });
      await soniq.setup();
      await soniq.schedules.sync();
      soniq.events.on("dashboard_action", (e) => {
        audits.push({ ...e });
      });
      served = await serve(
        "fetch",
        createDashboard({
          soniq,
          basePath: "/ops",
          auth: (req) => {
            const u = USERS[req.headers.get("authorization")?.replace(/^Bearer /, "") ?? ""];
            return u ? { name: u.name } : null;
          },
          access: (user) =>
            Object.values(USERS).find((u) => u.name === user.name)?.access ?? "read-only",
        }),
      );
    }, 60_000);
    afterAll(async () => {
      await served?.close();
      await soniq?.close();
    });

    const client = async (token: string) => {
      const c = new DashboardClient(served.root, { authorization: `Bearer ${token}` });
      await c.login();
      return c;
    };

    it("schedules › listed with timing, next instants, state; read-only and ungranted writes › 403, nothing changed", async () => {
      const viewer = await client("token-viewer");
      const list = (await (await viewer.fetch("GET", "api/schedules")).json()) as {
        schedules: Array<Record<string, unknown> & { upcoming: string[]; runs: unknown[] }>;
      };
      expect(list.schedules.map((s) => s.id)).toEqual(["reports.minutely", "reports.nightly"]);
      const nightly = list.schedules[1];
      expect(nightly).toMatchObject({
        cron: "30 2 * * *",
        timezone: "Europe/Paris",
        paused: false,
        jobName: "report.send",
      });
      expect(nightly?.upcoming).toHaveLength(3);
      expect(nightly?.runs).toEqual([]);
      const before = audits.length;
      for (const verb of ["pause", "resume", "run-now"]) {
        const r = await viewer.fetch("POST", `api/schedules/reports.nightly/${verb}`);
        expect(r.status, verb).toBe(403);
      }
      const pauser = await client("token-pauser");
      expect((await pauser.fetch("POST", "api/schedules/reports.nightly/run-now")).status).toBe(
        403,
      );
      expect((await soniq.schedules.show("reports.nightly")).runs).toEqual([]);
      expect((await soniq.schedules.show("reports.nightly")).schedule.paused).toBe(false);
      // Each refusal is audited once.
      expect(audits.slice(before).map((a) => [a.user, a.outcome])).toEqual([
        ["vic", "FORBIDDEN"],
        ["vic", "FORBIDDEN"],
        ["vic", "FORBIDDEN"],
        ["pat", "FORBIDDEN"],
      ]);
      const noCsrf = await pauser.fetch("POST", "api/schedules/reports.nightly/pause", undefined, {
        "x-soniq-csrf": "",
      });
      expect(noCsrf.status).toBe(403);
      expect((await soniq.schedules.show("reports.nightly")).schedule.paused).toBe(false);
      expect((await viewer.fetch("GET", "api/schedules/nope")).status).toBe(404);
    });

    it("schedules › pause, run now, resume › applied, shown as last run with its outcome, audited once each", async () => {
      const admin = await client("token-admin");
      const before = audits.length;
      const paused = (await (
        await admin.fetch("POST", "api/schedules/reports.nightly/pause")
      ).json()) as {
        paused: boolean;
      };
      expect(paused.paused).toBe(true);
      expect((await soniq.schedules.show("reports.nightly")).schedule.paused).toBe(true);
      const ran = await admin.fetch("POST", "api/schedules/reports.nightly/run-now");
      expect(ran.status).toBe(200);
      const { jobId } = (await ran.json()) as { jobId: string };
      expect((await soniq.jobs.get(jobId))?.name).toBe("report.send");
      const shown = (await (await admin.fetch("GET", "api/schedules/reports.nightly")).json()) as {
        runs: Array<{ outcome: string; manual: boolean; jobId: string }>;
        paused: boolean;
      };
      expect(shown.paused).toBe(true);
      expect(shown.runs[0]).toMatchObject({ outcome: "enqueued", manual: true, jobId });
      const resumed = await admin.fetch("POST", "api/schedules/reports.nightly/resume");
      expect(((await resumed.json()) as { paused: boolean }).paused).toBe(false);
      expect(audits.slice(before).map((a) => [a.user, a.action, a.ids, a.outcome])).toEqual([
        ["ada", "schedules.pause", ["reports.nightly"], "ok"],
        ["ada", "schedules.run", ["reports.nightly"], "ok"],
        ["ada", "schedules.resume", ["reports.nightly"], "ok"],
      ]);
    });

    it("remote › a frozen job › on the overview and the remote list, its phases in the timeline; resolved once, audited", async () => {
      const id = await frozenJob(soniq);
      const viewer = await client("token-viewer");
      const overview = (await (await viewer.fetch("GET", "api/overview")).json()) as {
        remote: { frozen: number };
        warnings: Array<{ kind: string }>;
      };
      expect(overview.remote.frozen).toBe(1);
      expect(overview.warnings.map((w) => w.kind)).toContain("frozen_remote");
      const frozen = (await (await viewer.fetch("GET", "api/remote?phase=frozen")).json()) as {
        remoteJobs: Array<Record<string, unknown>>;
        counts: { frozen: number };
      };
      expect(frozen.counts.frozen).toBe(1);
      expect(frozen.remoteJobs).toMatchObject([
        { jobId: id, state: "frozen", frozenReason: "deadline", idempotencyKey: `${id}:1` },
      ]);
      expect((await viewer.fetch("GET", "api/remote?phase=nope")).status).toBe(400);
      const detail = (await (await viewer.fetch("GET", `api/jobs/${id}`)).json()) as {
        timeline: Array<{ kind: string; detail: string | null }>;
      };
      const kinds = detail.timeline.map((e) => e.kind);
      expect(kinds).toEqual(expect.arrayContaining(["remote_submitting", "remote_frozen"]));
      expect(kinds.indexOf("remote_submitting")).toBeLessThan(kinds.indexOf("remote_frozen"));
      expect(detail.timeline.find((e) => e.kind === "remote_submitting")?.detail).toContain(
        `${id}:1`,
      );

      const before = audits.length;
      for (const [path, body] of [
        [`api/remote/${id}/resolve`, { resolution: "not_submitted" }],
        [`api/remote/${id}/poll-now`, undefined],
      ] as const) {
        expect((await viewer.fetch("POST", path, body)).status, path).toBe(403);
      }
      expect((await soniq.remote.show(id)).phase).toBe("frozen");

      const admin = await client("token-admin");
      const bad = await admin.fetch("POST", `api/remote/${id}/resolve`, {
        resolution: "accepted",
        taskId: "x".repeat(300),
      });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("INVALID_RESULT");
      expect(
        (await admin.fetch("POST", `api/remote/${id}/resolve`, { resolution: "maybe" })).status,
      ).toBe(400);
      const ok = await admin.fetch("POST", `api/remote/${id}/resolve`, {
        resolution: "accepted",
        taskId: "tsk_42",
      });
      expect(ok.status).toBe(200);
      expect(await soniq.remote.show(id)).toMatchObject({ phase: "accepted", taskId: "tsk_42" });
      const again = await admin.fetch("POST", `api/remote/${id}/resolve`, {
        resolution: "not_submitted",
      });
      expect(again.status).toBe(409);
      expect((await admin.fetch("POST", `api/remote/${id}/poll-now`)).status).toBe(200);
      const awaiting = (await (await admin.fetch("GET", "api/remote?phase=awaiting")).json()) as {
        remoteJobs: Array<Record<string, unknown>>;
      };
      expect(awaiting.remoteJobs).toMatchObject([
        { jobId: id, state: "awaiting", taskId: "tsk_42" },
      ]);
      const done = audits.slice(before).map((a) => [a.user, a.action, a.outcome]);
      expect(done).toEqual([
        ["vic", "remote.resolve", "FORBIDDEN"],
        ["vic", "remote.pollNow", "FORBIDDEN"],
        ["ada", "remote.resolve", "INVALID_RESULT"],
        ["ada", "remote.resolve", "BAD_REQUEST"],
        ["ada", "remote.resolve", "ok"],
        ["ada", "remote.resolve", "INVALID_STATE"],
        ["ada", "remote.pollNow", "ok"],
      ]);
      expect(audits[before + 4]?.result).toMatchObject({
        resolution: "accepted",
        taskId: "tsk_42",
      });
    });

    it("operations › a bulk cancel of everything matching › 409 on a wrong expectedCount, then live totals up to the final count, audited once", async () => {
      const N = 1500;
      await soniq.enqueueMany(
        Array.from({ length: N }, (_, i) => ({ name: "bulk.noop", args: { i } })),
      );
      const admin = await client("token-admin");
      const filter = { queue: "bulk", status: "queued" as const };
      const wrong = await admin.fetch("POST", "api/operations", {
        target: "jobs",
        action: "cancel",
        filter,
        expectedCount: N + 1,
      });
      expect(wrong.status).toBe(409);
      expect(await soniq.jobs.count(filter)).toBe(N);
      const viewer = await client("token-viewer");
      expect(
        (await viewer.fetch("POST", "api/operations", { target: "jobs", action: "cancel", filter }))
          .status,
      ).toBe(403);
      const before = audits.length;
      const started = await admin.fetch("POST", "api/operations", {
        target: "jobs",
        action: "cancel",
        filter,
        expectedCount: N,
      });
      expect(started.status).toBe(202);
      const { operation } = (await started.json()) as {
        operation: { id: string; matched: number };
      };
      expect(operation.matched).toBe(N);
      const seen: number[] = [];
      const last = await waitFor(
        async () => {
          const r = (await (await admin.fetch("GET", `api/operations/${operation.id}`)).json()) as {
            operation: { done: number; skipped: number; matched: number; finished: boolean };
          };
          seen.push(r.operation.done);
          return r.operation.finished ? r.operation : undefined;
        },
        60_000,
        "the operation to finish",
      );
      expect(last).toMatchObject({ matched: N, done: N, skipped: 0 });
      expect([...seen].sort((a, b) => a - b)).toEqual(seen);
      expect(await soniq.jobs.count(filter)).toBe(0);
      expect(await soniq.jobs.count({ queue: "bulk", status: "cancelled" })).toBe(N);
      expect(audits.slice(before).map((a) => [a.action, a.outcome])).toEqual([
        ["jobs.bulk.cancel", "ok"],
      ]);
      expect((await admin.fetch("GET", "api/operations/nope")).status).toBe(404);
    });
  });
}
