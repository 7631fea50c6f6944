/**
 * Crash recovery with real processes on a SQLite file and on PostgreSQL: a SIGKILL'd worker's job
 * runs again on another worker within the documented bound, attempts unchanged and the
 * interruption charged only where a start was known; a job that kills its own worker reaches the
 * DLQ within maxInterruptions + 2 crashes.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { prepared, startWorker, targets } from "../helpers/e2e-targets.js";
import { waitFor } from "../helpers/wait.js";

// Short windows so the test is quick; the bound scales with them (docs/reliability.md).
const FAST = {
  SONIQ_HEARTBEAT_INTERVAL: "0.2",
  SONIQ_HEARTBEAT_TIMEOUT: "1",
  SONIQ_POLL_INTERVAL: "0.1",
};
const BOUND_MS = (1 + 0.2 + 0.1) * 1000;

for (const target of targets) {
  describe.skipIf(target.skip)(`crash recovery, real processes, ${target.label}`, () => {
    it("SIGKILL mid-job: another worker runs it again within heartbeatTimeout + heartbeatInterval + poll", async () => {
      const { env, db } = await prepared(target, FAST);
      const a = startWorker(env);
      await a.ready;
      const id = await db.enqueue("e2e.sleep", { ms: 1500 });
      await waitFor(
        async () => (await db.getJob(id))?.status === "processing",
        10_000,
        "claimed by a",
      );
      const b = startWorker(env);
      await b.ready;
      const owner = (await db.getJob(id))?.workerId;
      a.child.kill("SIGKILL");
      const killedAt = Date.now();
      await a.exited;
      const reclaimed = await waitFor(
        async () => {
          const j = await db.getJob(id);
          return j?.status === "processing" && j.workerId !== owner ? j : null;
        },
        20_000,
        "re-claimed by b",
      );
      const took = Date.now() - killedAt;
      // Its start was not durably known (no crash history, so no start mark): the recovery
      // charges no interruption and records the crash history instead (docs/reliability.md).
      expect(reclaimed).toMatchObject({ attempts: 0, interruptions: 0, unchargedRecoveries: 1 });
      // Generous margin for process scheduling on a loaded machine.
      expect(took).toBeLessThan(BOUND_MS + 3_000);
      await waitFor(async () => (await db.getJob(id))?.status === "done", 20_000, "done");
      expect(await db.getJob(id)).toMatchObject({
        attempts: 1,
        interruptions: 0,
        unchargedRecoveries: 1,
      });
      b.child.kill("SIGTERM");
      expect((await b.exited).code).toBe(0);
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
