/**
 * Contract area: the worker store. Run on every backend by ../runner.ts.
 */
import { describe, expect, it } from "vitest";
import type { ContractContext } from "../helpers.js";

/** The worker store cases. */
export function workersCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("workers", () => {
    it("workerRegister, workerHeartbeat, workerMarkStopped › two workers › workerList tells live from stopped", async () => {
      const b = await make();
      await b.workerRegister({
        id: "w-a",
        hostname: "h",
        pid: 1,
        queues: ["x", "y"],
        concurrency: 4,
      });
      await b.workerRegister({ id: "w-b", hostname: "h", pid: 2, queues: null, concurrency: 1 });
      await b.workerHeartbeat({ workerId: "w-a", status: "draining" });
      await b.workerMarkStopped({ workerId: "w-b" });
      const rows = await b.workerList({ heartbeatTimeoutSeconds: 60 });
      const a = rows.find((r) => r.id === "w-a");
      const bb = rows.find((r) => r.id === "w-b");
      expect(a).toMatchObject({
        status: "draining",
        live: true,
        queues: ["x", "y"],
        concurrency: 4,
        pid: 1,
      });
      expect(bb).toMatchObject({ status: "stopped", live: false, queues: null });
      expect(bb?.stoppedAt).toBeInstanceOf(Date);
    });

    it("workerMarkStopped with an exit reason › repeated, unknown id, no reason › counted once per incarnation in workerExitCounts", async () => {
      const b = await make();
      expect(await b.workerExitCounts()).toEqual([]);
      const before = await b.now();
      for (const id of ["w-1", "w-2", "w-3"]) {
        await b.workerRegister({ id, hostname: "h", pid: 1, queues: null, concurrency: 1 });
      }
      await b.workerMarkStopped({ workerId: "w-1", exitReason: "record_failed" });
      // A retried mark of the same incarnation counts nothing more.
      await b.workerMarkStopped({ workerId: "w-1", exitReason: "record_failed" });
      await b.workerMarkStopped({ workerId: "w-2", exitReason: "drained" });
      await b.workerMarkStopped({ workerId: "w-3", exitReason: "drained" });
      await b.workerMarkStopped({ workerId: "unknown", exitReason: "drained" });
      await b.workerRegister({ id: "w-4", hostname: "h", pid: 1, queues: null, concurrency: 1 });
      await b.workerMarkStopped({ workerId: "w-4" });
      const counts = await b.workerExitCounts();
      expect(counts.map((c) => [c.exitReason, c.exits])).toEqual([
        ["drained", 2],
        ["record_failed", 1],
      ]);
      for (const c of counts) {
        expect(c.lastAt.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
      }
      // The counts outlive the rows: the reaper forgetting them changes nothing.
      await b.workerForget({ notSeenForSeconds: 0 });
      expect((await b.workerExitCounts()).map((c) => c.exits)).toEqual([2, 1]);
    });
  });
}
