/**
 * Memory mode (docs/backends.md, "Memory mode"): the SQLite backend on a private in-memory
 * database, with an injectable clock.
 */
import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createBackend } from "../../src/backends/select.js";
import { isSoniqError, MemoryBackend } from "../../src/index.js";
import { newJob as job } from "../contract/helpers.js";

const opened: MemoryBackend[] = [];
afterEach(async () => {
  for (const backend of opened.splice(0)) await backend.close();
});

function open(clock?: () => number): MemoryBackend {
  const backend = new MemoryBackend(clock ? { clock } : {});
  opened.push(backend);
  return backend;
}

describe("MemoryBackend", () => {
  it("is usable without setup, says what it is, and writes nothing to disk", async () => {
    const before = readdirSync(".").sort();
    const backend = open();
    expect(backend.kind).toBe("memory");
    expect(backend.capabilities).toEqual({
      transactionalEnqueue: false,
      crossProcessWake: false,
      durable: false,
    });
    const j = job();
    expect(await backend.jobEnqueue({ jobs: [j] })).toEqual([{ id: j.id, inserted: true }]);
    await backend.setup(); // allowed, changes nothing
    expect((await backend.jobGet({ id: j.id }))?.status).toBe("queued");
    expect(readdirSync(".").sort()).toEqual(before);
  });

  it("gives each object its own empty store", async () => {
    const a = open();
    const b = open();
    const j = job();
    await a.jobEnqueue({ jobs: [j] });
    expect(await b.jobGet({ id: j.id })).toBeNull();
    expect((await b.jobStats()).total).toBe(0);
  });

  it("finished-job counters › minutes older than 25 hours are folded by the pruner, counts unchanged", async () => {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const backend = open(() => now);
    for (let day = 0; day < 3; day += 1) {
      const j = job({ queue: day === 2 ? "late" : "q" });
      await backend.jobEnqueue({ jobs: [j] });
      const [c] = await backend.jobClaim({ workerId: "w", queues: null, limit: 1 });
      if (!c) throw new Error("nothing claimed");
      await backend.jobComplete({
        id: c.id,
        owner: { workerId: "w", claimToken: c.claimToken },
        result: null,
        resultRetentionSeconds: 30 * 86_400,
      });
      now += 86_400_000; // a day later
    }
    const before = await backend.jobStats();
    expect(before).toMatchObject({ done: 3, total: 3 });
    expect(await backend.jobPruneFinished({})).toBe(0);
    expect(await backend.jobStats()).toEqual(before);
    expect(await backend.admin.jobCountByQueueStatus()).toEqual([
      { queue: "late", status: "done", count: 1 },
      { queue: "q", status: "done", count: 2 },
    ]);
  });

  it("memory: URLs open a fresh store each time", async () => {
    const a = await createBackend({ databaseUrl: "memory:", schema: "public", poolSize: 1 });
    const b = await createBackend({ databaseUrl: "memory:", schema: "public", poolSize: 1 });
    try {
      expect(a.kind).toBe("memory");
      const j = job();
      await a.jobEnqueue({ jobs: [j] });
      expect(await b.jobGet({ id: j.id })).toBeNull();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("loses everything at close and rejects later calls with CLOSED", async () => {
    const backend = new MemoryBackend();
    await backend.jobEnqueue({ jobs: [job()] });
    await backend.close();
    const err = await backend.jobStats().catch((e: unknown) => e);
    expect(isSoniqError(err, "CLOSED")).toBe(true);
  });

  it("reads every time from the injected clock (milliseconds), so a test moves time forward", async () => {
    let now = Date.UTC(2030, 0, 1, 12, 0, 0);
    const backend = open(() => now);
    expect((await backend.now()).getTime()).toBe(now);

    const delayed = job({ delaySeconds: 60 });
    await backend.jobEnqueue({ jobs: [delayed] });
    expect((await backend.jobGet({ id: delayed.id }))?.scheduledAt.getTime()).toBe(now + 60_000);
    expect(await backend.jobClaim({ workerId: "w", queues: null, limit: 1 })).toEqual([]);

    now += 59_999;
    expect(await backend.jobClaim({ workerId: "w", queues: null, limit: 1 })).toEqual([]);
    now += 1;
    const [claimed] = await backend.jobClaim({ workerId: "w", queues: null, limit: 1 });
    expect(claimed?.id).toBe(delayed.id);
    const row = await backend.jobGet({ id: delayed.id });
    expect(row?.startedAt?.getTime()).toBe(now);
    expect(row?.createdAt.getTime()).toBe(now - 60_000);
  });

  it("rounds a fractional clock to whole milliseconds", async () => {
    const backend = open(() => 1_000.6);
    expect((await backend.now()).getTime()).toBe(1_001);
  });
});
