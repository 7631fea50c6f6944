/**
 * The shutdown contract's sync branch and the hard cut-off, with real `soniq worker` processes on
 * a SQLite file and on PostgreSQL: exit codes, rows and time bounds (generous, but bounds).
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startCli } from "../helpers/cli.js";
import { prepared, startWorker, targets } from "../helpers/e2e-targets.js";
import { waitFor } from "../helpers/wait.js";

const SLOW_LOAD_FIXTURE = fileURLToPath(new URL("../fixtures/slow-load-jobs.ts", import.meta.url));

for (const target of targets) {
  describe.skipIf(target.skip)(`shutdown contract, real processes, ${target.label}`, () => {
    it("SIGTERM before any claim: exit 0, nothing touched", async () => {
      const { env, db } = await prepared(target);
      const later = await db.enqueue("e2e.noop", {}, { delay: 3600 });
      const w = startWorker(env);
      await w.ready;
      const t0 = Date.now();
      w.child.kill("SIGTERM");
      const exit = await w.exited;
      expect(exit.code, exit.stderr).toBe(0);
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(await db.getJob(later)).toMatchObject({
        status: "queued",
        attempts: 0,
        workerId: null,
      });
      await db.close();
    });

    it("SIGTERM while the worker is still loading: an orderly exit 0, not death by signal", async () => {
      const { env, db } = await prepared(target);
      const id = await db.enqueue("e2e.noop", {});
      // The module announces itself, then takes 3 s to load: the signal provably lands mid-load.
      const w = startCli(["worker", SLOW_LOAD_FIXTURE], env);
      await waitFor(() => w.stderr().includes("fixture: loading"), 20_000, "module loading");
      w.child.kill("SIGTERM");
      const exit = await w.exited;
      expect(exit.signal).toBeNull();
      expect(exit.code, exit.stderr).toBe(0);
      expect(exit.stderr).not.toContain("worker started");
      expect(await db.getJob(id)).toMatchObject({ status: "queued", attempts: 0, workerId: null });
      await db.close();
    });

    it("a thread job that ends inside sync_handler_grace_seconds is recorded done, not NACK'd (exit 1)", async () => {
      const { env, db } = await prepared(target, {
        SONIQ_SHUTDOWN_TIMEOUT: "0.5",
        SONIQ_SYNC_HANDLER_GRACE_SECONDS: "20",
      });
      const id = await db.enqueue("e2e.block", { ms: 3000 });
      const w = startWorker(env);
      await w.ready;
      await waitFor(async () => (await db.getJob(id))?.status === "processing", 10_000, "claimed");
      const t0 = Date.now();
      w.child.kill("SIGTERM");
      const exit = await w.exited;
      const elapsed = Date.now() - t0;
      expect(exit.code, exit.stderr).toBe(1);
      expect(elapsed).toBeLessThan(3000 + 5_000); // the thread's own length, not the 20 s grace
      expect(exit.stderr).toContain("WAIT_FOR_THREAD");
      expect(exit.stderr).not.toContain("shutdown_nack");
      expect(await db.getJob(id)).toMatchObject({
        status: "done",
        attempts: 1,
        result: { slept: 3000 },
      });
      await db.close();
    });

    it("a thread job that outlives the grace is still waited for; heartbeats go on; then done (exit 1)", async () => {
      const { env, db } = await prepared(target, {
        SONIQ_SHUTDOWN_TIMEOUT: "0.3",
        SONIQ_SYNC_HANDLER_GRACE_SECONDS: "0.3",
        SONIQ_HEARTBEAT_INTERVAL: "0.2",
      });
      const id = await db.enqueue("e2e.block", { ms: 3500 });
      const w = startWorker(env);
      await w.ready;
      await waitFor(async () => (await db.getJob(id))?.status === "processing", 10_000, "claimed");
      const t0 = Date.now();
      w.child.kill("SIGTERM");
      await waitFor(
        () => w.stderr().includes("sync_handler_grace_seconds expired"),
        10_000,
        "grace expiry logged",
      );
      const [worker] = await db.workers();
      const beat1 = worker!.lastHeartbeatAt.getTime();
      await new Promise((r) => setTimeout(r, 600));
      const [again] = await db.workers();
      expect(again!.lastHeartbeatAt.getTime()).toBeGreaterThan(beat1); // still heartbeating
      expect(again).toMatchObject({ status: "draining", live: true });
      expect(await db.getJob(id)).toMatchObject({ status: "processing" });
      const exit = await w.exited;
      expect(exit.code, exit.stderr).toBe(1);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2_500);
      expect(await db.getJob(id)).toMatchObject({ status: "done", attempts: 1 });
      await db.close();
    });

    it("a thread job still waiting for a permit at the deadline is NACK'd; the running one finishes", async () => {
      const { env, db } = await prepared(target, {
        SONIQ_SHUTDOWN_TIMEOUT: "0.5",
        SONIQ_SYNC_HANDLER_POOL_SIZE: "1",
        SONIQ_SYNC_HANDLER_GRACE_SECONDS: "20",
      });
      const first = await db.enqueue("e2e.block", { ms: 2500 }, { priority: 0 });
      const second = await db.enqueue("e2e.block", { ms: 2500 }, { priority: 1 });
      const w = startWorker(env);
      await w.ready;
      await waitFor(async () => (await db.stats()).processing === 2, 10_000, "both claimed");
      w.child.kill("SIGTERM");
      const exit = await w.exited;
      expect(exit.code, exit.stderr).toBe(1);
      expect(exit.stderr).toContain("shutdown_nack");
      expect(await db.getJob(first)).toMatchObject({ status: "done", attempts: 1 });
      expect(await db.getJob(second)).toMatchObject({
        status: "queued",
        attempts: 0,
        workerId: null,
        lastError: null,
      });
      await db.close();
    });

    it("SIGKILL mid-job: the row stays processing, owned by the dead worker, attempts unchanged", async () => {
      const { env, db } = await prepared(target);
      const id = await db.enqueue("e2e.sleep", { ms: 60_000 });
      const w = startWorker(env);
      await w.ready;
      await waitFor(async () => (await db.getJob(id))?.status === "processing", 10_000, "claimed");
      const owner = (await db.getJob(id))?.workerId;
      w.child.kill("SIGKILL");
      const exit = await w.exited;
      expect(exit.signal).toBe("SIGKILL");
      expect(await db.getJob(id)).toMatchObject({
        status: "processing",
        attempts: 0,
        workerId: owner,
      });
      await db.close();
    });
  });
}
