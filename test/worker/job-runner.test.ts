// The job runner on the memory backend: dispatch (unknown job, invalid args → DLQ) and a full run.
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { workerParts } from "../helpers/worker-parts.js";

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function setup() {
  const parts = await workerParts(
    (soniq) => {
      soniq.job({
        name: "run.add",
        args: z.object({ a: z.number(), b: z.number() }),
        handler: async (args: { a: number; b: number }) => args.a + args.b,
      });
    },
    { rejectUnknownJobs: false },
  );
  await parts.runtime.completions.start();
  stops.push(() => parts.runtime.completions.stop());
  return parts;
}

describe("JobRunner", () => {
  it("run › no handler registered › dead-lettered as unknown_job, attempt not counted", async () => {
    const { soniq, claim, table, runtime, backend } = await setup();
    const id = await soniq.enqueue("run.nobody", {});
    const [job] = await claim();
    await table.track(
      job as NonNullable<typeof job>,
      (e) => runtime.runner.run(e),
      async () => {},
    ).done;
    expect(await backend.jobGet({ id })).toBeNull();
    expect(await backend.deadLetterGet({ id })).toMatchObject({
      reason: "unknown_job",
      attempts: 0,
    });
  });

  it("dispatch › arguments the schema rejects › invalid_args", async () => {
    const { soniq, claim, runtime, backend } = await setup();
    await backend.jobEnqueue({
      jobs: [
        {
          id: "00000000-0000-4000-8000-000000000001",
          name: "run.add",
          queue: "default",
          args: JSON.stringify({ a: "x" }),
          priority: 0,
          maxAttempts: 3,
          runAt: null,
          delaySeconds: 0,
          dedupKey: null,
        },
      ],
    });
    expect(soniq.definitions.has("run.add")).toBe(true);
    const [job] = await claim();
    const dispatched = await runtime.runner.dispatch(job as NonNullable<typeof job>);
    expect(dispatched).toMatchObject({ kind: "dead_letter", reason: "invalid_args" });
  });

  it("run › valid job › handler result stored, slot freed, entry gone", async () => {
    const { soniq, claim, table, runtime, backend } = await setup();
    const id = await soniq.enqueue("run.add", { a: 2, b: 3 });
    const [job] = await claim();
    const entry = table.track(
      job as NonNullable<typeof job>,
      (e) => runtime.runner.run(e),
      async () => {},
    );
    expect(table.busySlots).toBe(1);
    await entry.done;
    expect(table.busySlots).toBe(0);
    expect(table.size).toBe(0);
    expect(await backend.jobGet({ id })).toMatchObject({ status: "done", result: "5" });
  });
});
