// The completion batcher on the memory backend: completions of one turn share one write; stop
// flushes what is queued, then refuses with CLOSED.
import { describe, expect, it } from "vitest";
import { CompletionBatcher } from "../../src/worker/completion-batcher.js";
import { silent, workerParts } from "../helpers/worker-parts.js";

describe("CompletionBatcher", () => {
  it("complete › many in one turn, then stop › one write for all, then CLOSED", async () => {
    const { backend, soniq, claim } = await workerParts((s) => {
      s.job({ name: "batch.job", handler: async () => 1 });
    });
    for (let i = 0; i < 5; i += 1) await soniq.enqueue("batch.job", { i });
    const jobs = await claim();
    let writes = 0;
    const counting = new Proxy(backend, {
      get(target, prop, receiver) {
        if (prop === "jobCompleteMany") writes += 1;
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const batcher = new CompletionBatcher({
      backend: counting,
      retentionSeconds: 60,
      logger: silent,
    });
    await batcher.start();
    const results = jobs.map((j) =>
      batcher.complete({
        id: j.id,
        owner: { workerId: "w1", claimToken: j.claimToken },
        result: null,
      }),
    );
    await batcher.stop();
    expect(await Promise.all(results)).toEqual([true, true, true, true, true]);
    expect(writes).toBe(1);
    expect((await backend.jobStats()).done).toBe(5);
    await expect(
      batcher.complete({ id: "x", owner: { workerId: "w1", claimToken: "none" }, result: null }),
    ).rejects.toMatchObject({ code: "CLOSED" });
  });

  it("complete with a bound › the database does not answer › the batch is rejected by one timer, and the next batch is not held up", async () => {
    const { backend, soniq, claim } = await workerParts((s) => {
      s.job({ name: "batch.hang", handler: async () => 1 });
    });
    for (let i = 0; i < 4; i += 1) await soniq.enqueue("batch.hang", { i });
    const jobs = await claim();
    let calls = 0;
    // The first two writes hang (maxInFlight 2); later ones go through.
    const hanging = new Proxy(backend, {
      get(target, prop, receiver) {
        if (prop === "jobCompleteMany") {
          return (params: Parameters<typeof backend.jobCompleteMany>[0]) => {
            calls += 1;
            return calls <= 2
              ? new Promise<never>(() => undefined)
              : target.jobCompleteMany(params);
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const batcher = new CompletionBatcher({
      backend: hanging,
      retentionSeconds: 60,
      logger: silent,
      maxBatch: 1,
      stopBoundMs: 1000,
    });
    await batcher.start();
    const item = (i: number) => {
      const j = jobs[i];
      if (!j) throw new Error("missing job");
      return { id: j.id, owner: { workerId: "w1", claimToken: j.claimToken }, result: null };
    };
    const started = performance.now();
    const first = batcher.complete(item(0), 100);
    const second = batcher.complete(item(1), 100);
    await expect(first).rejects.toMatchObject({ name: "OperationTimeoutError" });
    await expect(second).rejects.toMatchObject({ name: "OperationTimeoutError" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
    // The timed-out writes no longer count against maxInFlight: these two are written.
    expect(await Promise.all([batcher.complete(item(2), 5000), batcher.complete(item(3))])).toEqual(
      [true, true],
    );
    expect((await backend.jobStats()).done).toBe(2);
    await batcher.stop();
  });
});
