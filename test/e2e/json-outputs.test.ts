/**
 * Every `--json` output validates against its committed JSON Schema (docs/schemas/, issue 27
 * item 2): the built CLI, run for real on a SQLite file and on PostgreSQL, prints each document of
 * src/cli/json/outputs.ts at least once — a job, a dead letter, a frozen remote job, schedules,
 * queues, workers, bulk and single actions, a failure, a worker's exit line — and ajv checks each
 * against its schema (formats too). A schema no command exercised fails the test.
 */
import { describe, expect, it } from "vitest";
import { JSON_OUTPUTS } from "../../src/cli/json/outputs.js";
import { runCli, startCli } from "../helpers/cli.js";
import { prepared, targets } from "../helpers/e2e-targets.js";
import { expectValid } from "../helpers/json-schemas.js";
import { waitFor } from "../helpers/wait.js";

const MODULE = "test/fixtures/schedule-jobs.ts";

for (const target of targets) {
  describe.skipIf(target.skip)(`--json outputs › ${target.label}`, () => {
    it("every command › real output › valid against its JSON Schema, every schema exercised", async () => {
      const { env, db } = await prepared(target, { SONIQ_LOG_LEVEL: "warn" });
      const seen = new Set<string>();
      /** Runs `soniq <args> --json`, expects `code`, validates stdout against `schema`. */
      const check = async (schema: string, args: string[], code = 0): Promise<unknown> => {
        const r = await runCli([...args, "--json"], env);
        expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(code);
        const doc = JSON.parse(r.stdout) as unknown;
        expectValid(schema, doc, args.join(" "));
        seen.add(schema);
        return doc;
      };
      try {
        await check("setup", ["setup"]);
        await check("schedules-sync", ["schedules", "sync", "--module", MODULE]);
        const { id: queued } = (await check("enqueue", [
          "enqueue",
          "report.send",
          "--args",
          '{"to":"ops"}',
          "--module",
          MODULE,
        ])) as { id: string };
        // A flow and a batch (docs/workflows.md), read back by `flows show` / `batches show`.
        const flow = await db.flow({
          job: "report.send",
          args: { to: "root" },
          children: [{ job: "report.send", args: { to: "child" } }],
        });
        await check("flow", ["flows", "show", flow.id]);
        const batch = await db.batch({
          jobs: [{ job: "report.send", args: { to: "member" } }],
          onComplete: { job: "report.send", args: { to: "callback" } },
          open: true,
        });
        await check("batch", ["batches", "show", batch.id]);
        const later = await db.enqueue("report.send", { to: "later" }, { delay: 3600 });
        const other = await db.enqueue("report.send", { to: "other" });
        // A frozen remote job and a dead letter, written as a worker would.
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

        await check("status", ["status"]);
        await check("jobs-list", ["jobs", "list"]);
        await check("job-detail", ["jobs", "show", queued]);
        await check("job-detail", ["dlq", "show", dead]);
        await check("dlq-list", ["dlq", "list"]);
        const exported = await runCli(["dlq", "export"], env);
        expect(exported.code, exported.stderr).toBe(0);
        const lines = exported.stdout.split("\n").filter((l) => l.length > 0);
        expect(lines).toHaveLength(1);
        for (const line of lines) expectValid("dlq-export-line", JSON.parse(line), "dlq export");
        seen.add("dlq-export-line");
        await check("bulk-result", ["jobs", "cancel", "--all", "--status", "queued", "--dry-run"]);
        await check("bulk-result", ["dlq", "replay", "--all", "--dry-run"]);
        await check("job-action", ["jobs", "retry", later]);
        await check("job-action", ["jobs", "cancel", queued, other]);
        await check("queues-list", ["queues", "list"]);
        await check("queue-detail", ["queues", "show", "default"]);
        await check("queue", ["queues", "pause", "default"]);
        await check("queue", ["queues", "set", "default", "--max-running", "3"]);
        await check("queue", ["queues", "resume", "default"]);
        await check("workers", ["workers"]);
        await check("recover", ["recover"]);
        await check("remote-list", ["remote", "list"]);
        await check("remote-job", ["remote", "show", remote]);
        await check("remote-resolve", ["remote", "resolve", remote, "--accepted", "tsk_1"]);
        await check("remote-poll-now", ["remote", "poll-now", remote]);
        await check("schedules-list", ["schedules", "list"]);
        await check("schedule-detail", ["schedules", "show", "reports.nightly"]);
        await check("schedule-preview", ["schedules", "preview", "--every", "60", "--count", "3"]);
        await check("schedule-run", ["schedules", "run", "reports.nightly"]);
        await check("schedule-action", ["schedules", "pause", "reports.nightly"]);
        await check("schedule-action", ["schedules", "resume", "reports.nightly"]);
        await check("schedule-action", ["schedules", "remove", "reports.nightly"]);
        await check("check-deploy", ["check-deploy", "deploy/kubernetes.yaml"]);
        await check("error", ["jobs", "show", "00000000-0000-4000-8000-000000000000"], 2);
        await check("error", ["status", "--no-such-flag"], 2);
        await check("job-action", ["dlq", "replay", dead]);
        await check("flow-cancel", ["flows", "cancel", flow.id]);
        await check("batch-cancel", ["batches", "cancel", batch.id]);

        // A worker's exit line.
        const worker = startCli(["worker", "--module", MODULE, "--json"], {
          ...env,
          SONIQ_LOG_LEVEL: "info",
        });
        await waitFor(() => worker.stderr().includes("worker started"), 45_000, "worker started");
        worker.child.kill("SIGTERM");
        const exit = await worker.exited;
        expect(exit.code, exit.stderr).toBe(0);
        const last = exit.stdout.trim().split("\n").at(-1) as string;
        expectValid("worker-exit", JSON.parse(last), "worker --json");
        seen.add("worker-exit");

        expect([...seen].sort()).toEqual(Object.keys(JSON_OUTPUTS).sort());
      } finally {
        await db.close();
      }
      // About 40 CLI processes (≈1.5 s of CPU each): 3 min measured on a busy 2-core machine.
    }, 600_000);
  });
}
