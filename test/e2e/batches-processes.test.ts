/**
 * Batches across real worker processes (issue 29 item 3; docs/workflows.md, "Batches"), on a
 * SQLite file and on PostgreSQL: 4 `soniq worker` processes hold the members of 100 batches (4
 * members each) and finish them at one instant, so the last members of many batches complete
 * concurrently in different processes. Checks: every callback (onComplete and onSuccess of each
 * batch) ran exactly once (a file each run appends to) and saw its 4 members done; every
 * callback row is done with attempts 1; no member or callback is left waiting or queued; each
 * batch finished exactly once (`soniq_flow_counts` plus the finishes not yet taken: 100
 * `succeeded`, nothing else; docs/workflows.md, "Knowing when a flow or batch finished").
 * Issue 29 names 8 processes; 4 keep this file near 30 s on a 2-core machine (a worker's start
 * costs about 1.5 s of CPU), and 100 batches × 4 members still end many batches at one instant.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Running, startCli } from "../helpers/cli.js";
import { prepared, targets, WORKER_READY_TIMEOUT_MS } from "../helpers/e2e-targets.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

const FIXTURE = "test/fixtures/batch-jobs.ts";
const BATCHES = 100;
const MEMBERS = 4;
const WORKERS = 4;

const children: Running[] = [];
afterAll(() => {
  for (const c of children) if (c.child.exitCode === null) c.child.kill("SIGKILL");
});

for (const target of targets) {
  describe.skipIf(target.skip)(`batches across worker processes on ${target.label}`, () => {
    it(`${target.label} › ${BATCHES} batches whose last members end at one instant on ${WORKERS} processes › each callback runs exactly once`, async () => {
      const log = join(await tempDir(), "callbacks.log");
      writeFileSync(log, "");
      const { env, db } = await prepared(target, {
        SONIQ_CONCURRENCY: "60",
        TEST_CALLBACK_LOG: log,
      });
      const workers = Array.from({ length: WORKERS }, () => {
        const worker = startCli(["worker", FIXTURE], env);
        const ready = waitFor(
          () => worker.stderr().includes("worker started"),
          WORKER_READY_TIMEOUT_MS,
          "worker started",
        );
        return { ...worker, ready };
      });
      children.push(...workers);
      await Promise.all(workers.map((w) => w.ready));
      const at = Date.now() + 4000;
      const callbacks: string[] = [];
      const members: string[] = [];
      for (let b = 0; b < BATCHES; b++) {
        const batch = await db.batch({
          jobs: Array.from({ length: MEMBERS }, (_, n) => ({
            job: "batch.member",
            args: { at, n },
          })),
          onComplete: { job: "batch.callback", args: { batch: b } },
          onSuccess: { job: "batch.callback", args: { batch: b } },
        });
        members.push(...batch.ids);
        callbacks.push(batch.callbacks.onComplete as string, batch.callbacks.onSuccess as string);
      }
      const lines = () => readFileSync(log, "utf8").split("\n").filter(Boolean);
      await waitFor(() => lines().length >= callbacks.length, 120_000, "every callback ran");
      // Give a double fire the time to show: every callback row done means nothing is left to run.
      await waitFor(
        async () =>
          (await Promise.all(callbacks.map((id) => db.getJob(id)))).every(
            (j) => j?.status === "done",
          ),
        60_000,
      );
      for (const w of workers) w.child.kill("SIGTERM");
      for (const w of workers) expect((await w.exited).code).toBe(0);
      const runs = lines().map((line) => line.split(" "));
      expect(runs.length).toBe(callbacks.length);
      expect(new Set(runs.map((r) => r[0])).size).toBe(callbacks.length);
      expect(new Set(runs.map((r) => r[0]))).toEqual(new Set(callbacks));
      expect(runs.every((r) => r[2] === String(MEMBERS))).toBe(true);
      const rows = await Promise.all([...callbacks, ...members].map((id) => db.getJob(id)));
      expect(rows.every((j) => j?.status === "done")).toBe(true);
      expect(rows.slice(0, callbacks.length).every((j) => j?.attempts === 1)).toBe(true);
      // Taking what the leaders have not taken yet counts it too: the counters then hold them all.
      const backend = await db.backend();
      await backend.flows.flowEndsTake({ limit: 1000 });
      const ends = await backend.flows.flowEndCounts();
      expect(ends.map((e) => `${e.kind} ${e.outcome} ${e.n}`)).toEqual([
        `batch succeeded ${BATCHES}`,
      ]);
      await db.close();
    }, 300_000);
  });
}
