/**
 * docs/operations.md ("Bulk actions"): a bulk action over a filter touches only rows that existed
 * when it began — `createdBefore` / `deadBefore` is bounded by that instant (the store's clock),
 * even when the caller gave a later bound — so a job enqueued, or a job dead-lettered, while the
 * action runs is untouched. The action's own `onProgress` hook (awaited after the count, before the
 * first page) is where the newcomer arrives; pages of one row make the walk newest-first, so an
 * unbounded filter would act on the newcomer and leave an old row. And a request key the action
 * does not take is refused (`INVALID_OPTION`), nothing changed, rather than ignored.
 */
import { pino } from "pino";
import { expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { type BackendTarget, describeEachBackend } from "../helpers/backend-targets.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });

async function open(target: BackendTarget) {
  const backend = await target.open();
  return new Soniq({ backend, logger: silent, env: {}, pollInterval: 0.05 });
}

describeEachBackend("bulk filters are bounded by the action's start", (target) => {
  for (const given of [undefined, "9999-01-01T00:00:00Z"]) {
    it(`jobs.bulk cancel, filter {${given ? " createdBefore: 9999 " : ""}} › a job enqueued during the action is untouched`, async () => {
      const soniq = await open(target);
      const job = soniq.job({ name: "bounded.job", handler: async () => "ok" });
      const old: string[] = [];
      for (let i = 0; i < 3; i += 1) old.push(await job.enqueue({ i }, { delay: 3600 }));
      let newcomer: string | undefined;
      const result = await soniq.jobs.bulk({
        action: "cancel",
        filter: given ? { createdBefore: given } : {},
        batchSize: 1,
        onProgress: async () => {
          newcomer ??= await job.enqueue({ i: "new" }, { delay: 3600 });
        },
      });
      expect(result).toEqual({ matched: 3, done: 3, skipped: 0, dryRun: false });
      for (const id of old) expect((await soniq.getJob(id))?.status).toBe("cancelled");
      expect(newcomer).toBeDefined();
      expect((await soniq.getJob(newcomer as string))?.status).toBe("queued");
      await soniq.close();
    });
  }

  it("deadLetters.deleteMany, filter {} › a job dead-lettered during the action is untouched", async () => {
    const soniq = await open(target);
    const fails = soniq.job({
      name: "always.fails",
      maxAttempts: 1,
      handler: async () => {
        throw new Error("boom");
      },
    });
    const deadLettered = async (ids: string[]) => {
      const worker = soniq.worker({ concurrency: 4 });
      await worker.start();
      await waitFor(
        async () => (await Promise.all(ids.map((id) => soniq.getDeadLetter(id)))).every(Boolean),
        20_000,
        "dead letters",
      );
      await worker.stop();
    };
    const old: string[] = [];
    for (let i = 0; i < 3; i += 1) old.push(await fails.enqueue({ i }));
    await deadLettered(old);
    let newcomer: string | undefined;
    const result = await soniq.deadLetters.deleteMany({
      filter: {},
      batchSize: 1,
      onProgress: async () => {
        if (newcomer !== undefined) return;
        newcomer = await fails.enqueue({ i: "new" });
        await deadLettered([newcomer]);
      },
    });
    expect(result).toEqual({ matched: 3, done: 3, skipped: 0, dryRun: false });
    for (const id of old) expect(await soniq.getDeadLetter(id)).toBeNull();
    expect(await soniq.getDeadLetter(newcomer as string)).not.toBeNull();
    await soniq.close();
  });

  it("an unknown request key (a misspelt expectedCount) › INVALID_OPTION naming it, nothing changed", async () => {
    const soniq = await open(target);
    const job = soniq.job({ name: "bounded.job", handler: async () => "ok" });
    const id = await job.enqueue({}, { delay: 3600 });
    const misspelt = { action: "cancel", filter: {}, expectedcount: 5 } as unknown as Parameters<
      typeof soniq.jobs.bulk
    >[0];
    await expect(soniq.jobs.bulk(misspelt)).rejects.toMatchObject({
      code: "INVALID_OPTION",
      details: { option: "expectedcount" },
    });
    const dead = { filter: {}, dryrun: true } as unknown as Parameters<
      typeof soniq.deadLetters.deleteMany
    >[0];
    await expect(soniq.deadLetters.deleteMany(dead)).rejects.toMatchObject({
      code: "INVALID_OPTION",
      details: { option: "dryrun" },
    });
    expect((await soniq.getJob(id))?.status).toBe("queued");
    await soniq.close();
  });
});
