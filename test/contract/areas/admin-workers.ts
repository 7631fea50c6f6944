/**
 * Operations contract: workers. Each incarnation with what it declared (heartbeat timeout), its
 * shutdown state as its machine has it (a draining worker shows DRAINING with its drain start and
 * deadline), and its in-flight jobs; liveness by its own declared timeout.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../../helpers/wait.js";
import type { ContractContext } from "../helpers.js";
import { soniqOn } from "./admin-helpers.js";

export function adminWorkerCases({ make }: ContractContext): void {
  describe("operations: workers", () => {
    it("workerDetails › a draining worker › DRAINING, drain start, deadline and its in-flight job; then STOPPED", async () => {
      const b = await make();
      const soniq = soniqOn(b, { shutdownTimeout: 30, heartbeatTimeout: 1.25 });
      let release: () => void = () => undefined;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const job = soniq.job({ name: "w.gate", handler: () => gate });
      const id = await job.enqueue({});
      const worker = soniq.worker({ concurrency: 1 });
      await worker.start();
      await waitFor(async () => (await b.jobGet({ id }))?.status === "processing", 5000, "claimed");
      const [running] = await soniq.workers();
      expect(running).toMatchObject({
        id: worker.id,
        live: true,
        shutdownState: "RUNNING",
        heartbeatTimeoutSeconds: 1.25,
        inFlight: [id],
        drainStartedAt: null,
      });
      const stopped = worker.stop("SIGTERM");
      const draining = await waitFor(
        async () => {
          const [w] = await soniq.workers();
          return w?.shutdownState === "DRAINING" ? w : null;
        },
        5000,
        "DRAINING reported by a heartbeat",
      );
      expect(draining.status).toBe("draining");
      expect(draining.deadlineAt).toBeInstanceOf(Date);
      expect(draining.drainStartedAt).toBeInstanceOf(Date);
      const window =
        (draining.deadlineAt as Date).getTime() - (draining.drainStartedAt as Date).getTime();
      expect(Math.abs(window - 30_000)).toBeLessThan(1000);
      release();
      await stopped;
      const [after] = await soniq.workers();
      expect(after).toMatchObject({ shutdownState: "STOPPED", live: false, inFlight: [] });
    });

    it("workerDetails › past the shutdown deadline › FORCE_TIMEOUT_PATH shown; the job's timeline has the NACK, attempts kept", async () => {
      const b = await make();
      const soniq = soniqOn(b, { shutdownTimeout: 0.2, shutdownSettle: 1.5 });
      const job = soniq.job({
        name: "w.stubborn",
        handler: () => new Promise((resolve) => setTimeout(resolve, 3000)),
      });
      const id = await job.enqueue({});
      const worker = soniq.worker({ concurrency: 1 });
      await worker.start();
      await waitFor(async () => (await b.jobGet({ id }))?.status === "processing", 5000, "claimed");
      const stopped = worker.stop("SIGTERM");
      const forced = await waitFor(
        async () => {
          const [w] = await soniq.workers();
          return w?.shutdownState === "FORCE_TIMEOUT_PATH" ? w : null;
        },
        3000,
        "FORCE_TIMEOUT_PATH in the worker row",
      );
      expect(forced.inFlight).toEqual([id]);
      expect(await stopped).toMatchObject({ reason: "shutdown_timeout", released: [id] });
      const detail = await waitFor(
        async () => {
          const d = await soniq.jobs.get(id);
          return d?.timeline.some((e) => e.kind === "nack") ? d : null;
        },
        3000,
        "the NACK on the timeline",
      );
      expect(detail).toMatchObject({ status: "queued", attempts: 0 });
    });
  });
}
