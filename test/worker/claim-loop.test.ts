// The claim loop on the memory backend: fills the free slots only, wakes on a freed slot, stops.
import { describe, expect, it } from "vitest";
import type { ClaimedJob } from "../../src/backends/contract/index.js";
import { ClaimLoop } from "../../src/worker/claim-loop.js";
import { waitFor } from "../helpers/wait.js";
import { silent, workerParts } from "../helpers/worker-parts.js";

describe("ClaimLoop", () => {
  it("run › more jobs than slots › claims only the free slots, the rest after a slot frees", async () => {
    const { soniq, backend, table, latch } = await workerParts((s) => {
      s.job({ name: "claim.job", handler: async () => 1 });
    });
    for (let i = 0; i < 3; i += 1) await soniq.enqueue("claim.job", { i });
    const release: Array<() => void> = [];
    const dispatched: ClaimedJob[] = [];
    const loop = new ClaimLoop({
      backend,
      workerId: "w1",
      queues: null,
      concurrency: 2,
      pollIntervalSeconds: 0.02,
      table,
      latch,
      logger: silent,
      dispatch: (job) => {
        dispatched.push(job);
        table.track(
          job,
          () => new Promise<void>((r) => release.push(r)),
          async () => {},
        );
      },
      releaseLate: () => undefined,
    });
    await loop.start();
    await waitFor(() => dispatched.length === 2);
    expect(table.busySlots).toBe(2);
    expect((await backend.jobStats()).queued).toBe(1);
    release.shift()?.();
    await waitFor(() => dispatched.length === 3, 5_000, "third claim after a slot freed");
    await loop.stop();
    expect(loop.state).toBe("idle");
    for (const r of release) r();
    await table.settled();
  });
});
