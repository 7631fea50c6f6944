/**
 * Crash recovery with real processes on a SQLite file and on PostgreSQL: a SIGKILL'd worker's job
 * runs again on another worker within the documented bound, attempts unchanged and the
 * interruption charged only where a start was known; a job that kills its own worker reaches the
 * DLQ within maxInterruptions + 2 crashes.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { prepared, startWorker as start, targets } from "../helpers/e2e-targets.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

// Short windows so the test is quick; the bound scales with them (docs/reliability.md).
const FAST = {
  SONIQ_HEARTBEAT_INTERVAL: "0.2",
  SONIQ_HEARTBEAT_TIMEOUT: "1",
  SONIQ_POLL_INTERVAL: "0.1",
};
const BOUND_MS = (1 + 0.2 + 0.1) * 1000;

/** Job ids whose handler ran, from the fixture's run log (e2e.gate logs its start). */
function runs(path: string): string[] {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
}

/** Workers this file started: a failed test leaves none running behind it. */
const workers: Array<ReturnType<typeof start>> = [];
afterEach(() => {
  for (const w of workers.splice(0)) {
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
  }
});

/** `soniq worker` on the fixture (e2e-targets.ts), killed after the test if still alive. */
function startWorker(env: Record<string, string>) {
  const w = start(env);
  workers.push(w);
  return w;
}

/** The worker id a started worker logged ("worker started"). */
function workerIdOf(w: ReturnType<typeof start>): string | undefined {
  const line = w
    .stderr()
    .split("\n")
    .find((l) => l.includes('"worker started"'));
  return line ? (JSON.parse(line) as { worker_id?: string }).worker_id : undefined;
}

for (const target of targets) {
  describe.skipIf(target.skip)(`crash recovery, real processes, ${target.label}`, () => {
    it("SIGKILL mid-job: another worker runs it again within heartbeatTimeout + heartbeatInterval + poll", async () => {
      const log = join(tempDir(), "runs.log");
      const gate = join(tempDir(), "gate");
      const { env, db } = await prepared(target, { ...FAST, E2E_RUN_LOG: log });
      // Both workers are up before the job exists: a worker's start (a process, the CLI, the
      // fixture module) took 2–6 s on a loaded machine, longer than the job once ran, so a second
      // worker started after the claim found the job already done by the first.
      const pair = [startWorker(env), startWorker(env)];
      await Promise.all(pair.map((w) => w.ready));
      const id = await db.enqueue("e2e.gate", { path: gate });
      // Its handler has started (the run log) and cannot end before the gate opens, however late
      // the kill comes: the kill lands mid-job.
      await waitFor(() => runs(log).includes(id), 10_000, "the job running");
      const owner = (await db.getJob(id))?.workerId;
      const victim = pair.find((w) => workerIdOf(w) === owner);
      const survivor = pair.find((w) => w !== victim);
      if (!victim || !survivor) throw new Error(`no started worker is ${owner}`);
      victim.child.kill("SIGKILL");
      const killedAt = Date.now();
      await victim.exited;
      writeFileSync(gate, ""); // the run on the survivor ends at once
      // The final state cannot be missed (sampling for the re-claim's short `processing` could);
      // the row's history says who re-claimed it and when (`startedAt` is set by each claim).
      const done = await waitFor(
        async () => {
          const job = await db.getJob(id);
          return job?.status === "done" ? job : null;
        },
        30_000,
        "done",
      );
      // Run again by the other worker. Its start was not durably known (no crash history, so no
      // start mark): the recovery charged no interruption and recorded the crash history instead
      // (docs/reliability.md); the one attempt spent is the run that finished.
      expect(done).toMatchObject({
        workerId: workerIdOf(survivor),
        attempts: 1,
        interruptions: 0,
        unchargedRecoveries: 1,
      });
      expect(runs(log).filter((run) => run === id)).toHaveLength(2);
      const took = (done.startedAt?.getTime() ?? Number.NaN) - killedAt;
      // Generous margin for process scheduling on a loaded machine.
      expect(took).toBeLessThan(BOUND_MS + 3_000);
      survivor.child.kill("SIGTERM");
      expect((await survivor.exited).code).toBe(0);
      await db.close();
    }, 60_000);

    it("soniq recover requeues a dead worker's job on demand (attempts unchanged)", async () => {
      const { env, db } = await prepared(target, FAST);
      const id = await db.enqueue("e2e.sleep", { ms: 60_000 });
      const w = startWorker(env);
      await w.ready;
      await waitFor(async () => (await db.getJob(id))?.status === "processing", 10_000, "claimed");
      w.child.kill("SIGKILL");
      await w.exited;
      await new Promise((r) => setTimeout(r, 1500)); // past heartbeatTimeout (1 s)
      const recover = await runCli(["recover", "--json"], env);
      expect(recover.code, recover.stderr).toBe(0);
      const result = JSON.parse(recover.stdout) as { requeued: Array<{ id: string }> };
      expect(result.requeued.map((j) => j.id)).toEqual([id]);
      expect(await db.getJob(id)).toMatchObject({
        status: "queued",
        attempts: 0,
        interruptions: 0, // not known to have started: not charged
        unchargedRecoveries: 1,
        workerId: null,
      });
      await db.close();
    }, 60_000);

    it("a job that kills its own worker reaches the DLQ as crash_loop within maxInterruptions + 2 (5) crashes", async () => {
      const { env, db } = await prepared(target, FAST);
      const id = await db.enqueue("e2e.suicide", {});
      let deaths = 0;
      while (!(await db.getDeadLetter(id)) && deaths < 8) {
        const w = startWorker(env);
        const exit = await Promise.race([
          w.exited,
          waitFor(() => db.getDeadLetter(id), 30_000, "dead letter").then(() => null),
        ]);
        if (exit === null) {
          w.child.kill("SIGTERM");
          await w.exited;
          break;
        }
        expect(exit.signal).toBe("SIGKILL");
        deaths += 1;
      }
      // Killed 5 times: the first crash charged nothing (no start was known yet), the next three
      // recoveries requeued it charged, the fourth charged one moved it to the DLQ.
      expect(deaths).toBe(5);
      const dead = await db.getDeadLetter(id);
      expect(dead).toMatchObject({ reason: "crash_loop", attempts: 0, interruptions: 4 });
      await db.close();
    }, 120_000);
  });
}
