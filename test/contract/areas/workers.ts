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
  });
}
