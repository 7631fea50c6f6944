/**
 * The CLI's `--json` and the dashboard's HTTP API print the same shapes (src/admin/json): for one
 * job, one dead letter, one schedule and one remote job, `soniq … show --json` (a real process)
 * and the API's body for the same object parse with the same zod schema and agree field by field
 * (the value fields differ by design: the CLI prints the whole value, the API a server-cut
 * preview).
 */
import { describe, expect, it } from "vitest";
import {
  jobDetailJsonSchema,
  jobJsonSchema,
  remoteJobJsonSchema,
  scheduleDetailJsonSchema,
} from "../../src/admin/json/index.js";
import { createDashboard } from "../../src/dashboard/index.js";
import { runCli } from "../helpers/cli.js";
import { DashboardClient, serve } from "../helpers/dashboard.js";
import { prepared, targets } from "../helpers/e2e-targets.js";

const MODULE = "test/fixtures/schedule-jobs.ts";

/** The document without its value fields. */
function withoutValues(doc: Record<string, unknown>): Record<string, unknown> {
  const { args: _args, result: _result, ...rest } = doc;
  return rest;
}

for (const target of targets) {
  describe.skipIf(target.skip)(`shared JSON shapes › ${target.label}`, () => {
    it("cli --json and the API › a job, a dead letter, a schedule, a remote job › the same schema, the same fields", async () => {
      const { env, db } = await prepared(target, { SONIQ_LOG_LEVEL: "warn" });
      const sync = await runCli(["schedules", "sync", "--module", MODULE], env);
      expect(sync.code, sync.stderr).toBe(0);
      const queued = await db.enqueue("report.send", { to: "ops" }, { dedupKey: "k1" });
      const remote = await db.enqueue("media.render", {}, { queue: "remote" });
      const dead = await db.enqueue("report.fail", { n: 1 }, { queue: "dead" });
      const backend = await db.backend();
      await backend.workerRegister({
        id: "w",
        hostname: "h",
        pid: 1,
        queues: null,
        concurrency: 2,
      });
      for (const [id, queue] of [
        [remote, "remote"],
        [dead, "dead"],
      ] as const) {
        const [job] = await backend.jobClaim({ workerId: "w", queues: [queue], limit: 1 });
        expect(job?.id).toBe(id);
        const owner = { workerId: "w", claimToken: job?.claimToken as string };
        if (queue === "remote") {
          await backend.submissions.submissionMarkSubmitting({
            jobId: id,
            owner,
            name: "media.render",
            queue,
          });
          await backend.submissions.submissionFreeze({ jobId: id, owner, reason: "deadline" });
        } else {
          await backend.jobDeadLetter({
            id,
            owner,
            error: "boom",
            reason: "max_attempts_exceeded",
            countAttempt: true,
          });
        }
      }

      const served = await serve("fetch", createDashboard({ soniq: db, auth: "none" }));
      try {
        const api = new DashboardClient(served.root);
        const get = async (path: string) => {
          const r = await api.fetch("GET", path);
          expect(r.status, path).toBe(200);
          return (await r.json()) as Record<string, unknown>;
        };
        const cli = async (args: string[]) => {
          const r = await runCli([...args, "--json"], env);
          expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
          return JSON.parse(r.stdout) as Record<string, unknown>;
        };

        // A job: detail and list row.
        const jobCli = jobDetailJsonSchema.parse(await cli(["jobs", "show", queued]));
        const jobApi = jobDetailJsonSchema.parse(await get(`api/jobs/${queued}`));
        expect(withoutValues(jobApi)).toEqual(withoutValues(jobCli));
        expect(jobCli.args).toEqual({ to: "ops" });
        expect(jobApi.args).toMatchObject({ json: JSON.stringify({ to: "ops" }, null, 2) });
        const listCli = (await cli(["jobs", "list", "--queue", "default"])).jobs as unknown[];
        const listApi = (await get("api/jobs?queue=default")).jobs as unknown[];
        expect(listCli).toHaveLength(1);
        // List rows carry no result (jobs show does).
        expect(listCli[0]).not.toHaveProperty("result");
        expect(listApi[0]).not.toHaveProperty("result");
        expect(withoutValues(jobJsonSchema.parse(listApi[0]))).toEqual(
          withoutValues(jobJsonSchema.parse(listCli[0])),
        );

        // A dead letter.
        const deadCli = jobDetailJsonSchema.parse(await cli(["dlq", "show", dead]));
        const deadApi = jobDetailJsonSchema.parse(await get(`api/dead-letter/${dead}`));
        expect(deadCli).toMatchObject({ status: "dead_letter", reason: "max_attempts_exceeded" });
        expect(withoutValues(deadApi)).toEqual(withoutValues(deadCli));
        // The API's dead-letter detail had no timeline before (it read deadLetters.get).
        expect(deadApi.timeline.map((e) => e.kind)).toContain("enqueued");
        const dlqCli = (await cli(["dlq", "list"])).deadLetters as unknown[];
        const dlqApi = (await get("api/dead-letter")).deadLetters as unknown[];
        expect(withoutValues(jobJsonSchema.parse(dlqApi[0]))).toEqual(
          withoutValues(jobJsonSchema.parse(dlqCli[0])),
        );

        // A schedule.
        const scheduleCli = scheduleDetailJsonSchema.parse(
          await cli(["schedules", "show", "reports.nightly"]),
        );
        const scheduleApi = scheduleDetailJsonSchema.parse(
          await get("api/schedules/reports.nightly"),
        );
        expect(scheduleApi).toEqual(scheduleCli);
        expect(scheduleCli).toMatchObject({ cron: "30 2 * * *", timezone: "Europe/Paris" });
        const listed = (await get("api/schedules")).schedules as unknown[];
        for (const s of listed) scheduleDetailJsonSchema.parse(s);

        // A remote job.
        const remoteCli = remoteJobJsonSchema.parse(await cli(["remote", "show", remote]));
        const remoteApi = remoteJobJsonSchema.parse(await get(`api/remote/${remote}`));
        expect(remoteApi).toEqual(remoteCli);
        expect(remoteCli).toMatchObject({ state: "frozen", idempotencyKey: `${remote}:1` });
        const remoteListCli = (await runCli(["remote", "list", "--json"], env)).stdout;
        const remoteListApi = (await get("api/remote")).remoteJobs as unknown[];
        expect(remoteListApi.map((r) => remoteJobJsonSchema.parse(r))).toEqual(
          (JSON.parse(remoteListCli) as unknown[]).map((r) => remoteJobJsonSchema.parse(r)),
        );
      } finally {
        await served.close();
        await db.close();
      }
    }, 120_000);
  });
}
