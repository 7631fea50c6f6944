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
});
