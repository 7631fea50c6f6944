/**
 * README and docs/operations.md ("Retention"): `deadLetterRetention: 0` keeps dead letters for
 * ever. The pruner is the only code that deletes dead letters by age; with retention 0 it never
 * asks the store to prune them, whatever their age, while it still prunes the rest (finished jobs,
 * timeline events, orphan controls). A retention above 0 is passed to the store as is. No clock is
 * involved: each case awaits a completed tick (`runNow` joins or runs one).
 */
import { pino } from "pino";
import { expect, it } from "vitest";
import { Pruner } from "../../src/maintenance/pruner.js";

/** A store that records which prune calls it got (each prunes nothing). */
function recordingBackend() {
  const calls: { method: string; olderThanSeconds?: number }[] = [];
  const backend = {
    jobPruneFinished: async () => {
      calls.push({ method: "jobPruneFinished" });
      return 0;
    },
    admin: {
      deadLetterPrune: async (o: { olderThanSeconds: number }) => {
        calls.push({ method: "deadLetterPrune", olderThanSeconds: o.olderThanSeconds });
        return 0;
      },
      jobEventsPrune: async () => {
        calls.push({ method: "jobEventsPrune" });
        return 0;
      },
      jobControlsPrune: async () => {
        calls.push({ method: "jobControlsPrune" });
        return 0;
      },
    },
  };
  return { calls, backend };
}

async function oneTick(deadLetterRetentionSeconds: number | undefined) {
  const { calls, backend } = recordingBackend();
  const pruner = new Pruner({
    backend: backend as unknown as ConstructorParameters<typeof Pruner>[0]["backend"],
    logger: pino({ level: "silent" }),
    intervalMs: 3_600_000,
    ...(deadLetterRetentionSeconds === undefined ? {} : { deadLetterRetentionSeconds }),
  });
  await pruner.start();
  await pruner.runNow();
  await pruner.stop();
  return calls;
}

it("pruner › deadLetterRetention 0 › never prunes dead letters, still prunes the rest", async () => {
  const calls = await oneTick(0);
  const methods = new Set(calls.map((c) => c.method));
  expect(methods.has("deadLetterPrune")).toBe(false);
  expect(methods).toEqual(new Set(["jobPruneFinished", "jobEventsPrune", "jobControlsPrune"]));
});

it("pruner › deadLetterRetention above 0, and the 30-day default › prunes dead letters older than it", async () => {
  const given = await oneTick(5);
  expect(given.filter((c) => c.method === "deadLetterPrune")[0]).toEqual({
    method: "deadLetterPrune",
    olderThanSeconds: 5,
  });
  const byDefault = await oneTick(undefined);
  expect(byDefault.filter((c) => c.method === "deadLetterPrune")[0]).toEqual({
    method: "deadLetterPrune",
    olderThanSeconds: 30 * 24 * 3600,
  });
});
