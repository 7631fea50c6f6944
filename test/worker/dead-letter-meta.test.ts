// A dead letter keeps its job's Soniq metadata (issue 28; docs/flow-control.md, "Stored") on the
// workflow paths too, on a SQLite file and on PostgreSQL: a keyed dependant dead-lettered by the
// database's own trigger (`dependency_failed`) keeps its key, and when its dependency is replayed
// the re-arm brings it back waiting with that key — released, it waits for its key's limit.
import { pino } from "pino";
import { expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { describeEachBackend } from "../helpers/backend-targets.js";

const silent = pino({ level: "silent" });

describeEachBackend("worker: dead letters keep the job's metadata", (target) => {
  it("workflow › a keyed dependant dead-lettered for its dependency, the dependency replayed › back with its key; released, it waits for its key's limit", async () => {
    const backend = await target.open();
    const soniq = new Soniq({ backend, logger: silent, env: {} });
    const keyed = soniq.job({
      name: "dm.keyed",
      concurrency: { key: () => "acme", limit: 1 },
      handler: async () => undefined,
    });
    const child = soniq.job({ name: "dm.child", maxAttempts: 1, handler: async () => undefined });
    const flow = await soniq.flow({ job: keyed, args: {}, children: [{ job: child, args: {} }] });
    const [rootId, childId] = flow.ids as [string, string];
    const meta = (await backend.jobGet({ id: rootId }))?.meta;
    expect(JSON.parse(meta ?? "null")).toEqual({ concurrency: { key: "acme", limit: 1 } });

    const claim = () => backend.jobClaim({ workerId: "w", queues: null, limit: 10 });
    const owner = (c: { workerId: string; claimToken: string }) => ({
      workerId: c.workerId,
      claimToken: c.claimToken,
    });
    const [c1] = await claim();
    expect(c1?.id).toBe(childId);
    await backend.jobDeadLetter({
      id: childId,
      owner: owner(c1!),
      error: "bad",
      reason: "max_attempts_exceeded",
      countAttempt: true,
    });
    expect(await backend.deadLetterGet({ id: rootId })).toMatchObject({
      reason: "dependency_failed",
      meta,
    });

    // The replay re-arms the flow: the root is live again, waiting, with its metadata.
    expect(await backend.deadLetterReplay({ id: childId })).toBe(true);
    expect(await backend.jobGet({ id: rootId })).toMatchObject({ status: "queued", meta });
    const other = await keyed.enqueue({});
    const second = await claim();
    expect(second.map((c) => c.id).sort()).toEqual([childId, other].sort());
    const c2 = second.find((c) => c.id === childId)!;
    const running = second.find((c) => c.id === other)!;
    await backend.jobComplete({
      id: childId,
      owner: owner(c2),
      result: null,
      resultRetentionSeconds: 60,
    });
    // Released, but `acme` has one processing (its limit): the root is not claimed beside it.
    expect(await claim()).toEqual([]);
    await backend.jobComplete({
      id: other,
      owner: owner(running),
      result: null,
      resultRetentionSeconds: 60,
    });
    expect((await claim()).map((c) => c.id)).toEqual([rootId]);
    await soniq.close();
  });
});
