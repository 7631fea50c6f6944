// SQLite's two job tables (migration 008; docs/backends.md, "Two tables: live jobs and finished
// jobs"): the job listing walks both primary keys backwards and merges them (no sort), legacy
// (non-UUIDv7) rows after, by created_at, through their partial indexes; a finished job leaves
// soniq_jobs in the same transaction as its fenced write, its dedup key held until its retention
// passes; and the memory backend's injected clock decides those holds.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { MemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { LIST_WINDOW, SQL } from "../../src/backends/sqlite/sql.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { newJobId } from "../../src/jobs/job-id.js";
import { claimDue, newJob, ownerOf } from "../contract/helpers.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

const opened: Backend[] = [];
afterEach(async () => {
  for (const b of opened.splice(0)) await b.close();
});
afterAll(() => removeTempDirs());

async function fileBackend(): Promise<{ backend: SqliteBackend; path: string }> {
  const path = join(tempDir("soniq-sqlite-finished-"), "jobs.db");
  const backend = new SqliteBackend({ path });
  await backend.setup();
  opened.push(backend);
  return { backend, path };
}

function memory(clock?: () => number): MemoryBackend {
  const backend = new MemoryBackend(clock ? { clock } : {});
  opened.push(backend);
  return backend;
}

/** Enqueues, claims and completes `ids` (UUIDv7 unless given) with `retentionSeconds`. */
async function completed(b: Backend, jobs: ReturnType<typeof newJob>[], retentionSeconds: number) {
  await b.jobEnqueue({ jobs });
  const claimed = await claimDue(b, jobs.length);
  const done = await b.jobCompleteMany({
    items: claimed.map((c) => ({ id: c.id, owner: ownerOf(c), result: '{"ok":true}' })),
    resultRetentionSeconds: retentionSeconds,
  });
  expect(done.every(Boolean)).toBe(true);
}

function plan(path: string, sql: string, params: Record<string, unknown>): string {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as Array<{ detail: string }>;
    return rows.map((r) => r.detail).join("\n");
  } finally {
    db.close();
  }
}

const NO_FILTER = {
  live: 1,
  finished: 1,
  statuses: null,
  queues: null,
  names: null,
  ids: null,
  dedupKey: null,
  errorText: null,
  argsPath: null,
  argsValue: null,
  createdAfter: null,
  createdBefore: null,
  finishedAfter: null,
  finishedBefore: null,
};

describe("sqlite: finished jobs", () => {
  it("jobList › its plans › each table's primary key walked backwards and merged; legacy rows by their partial indexes; no sort", async () => {
    const { path } = await fileBackend();
    const byId = plan(path, SQL.jobListById, {
      ...NO_FILTER,
      beforeId: "~",
      lowId: "",
      limit: 10,
    });
    expect(byId).toMatch(/MERGE \(UNION ALL\)/);
    expect(byId).toMatch(/SEARCH j USING INDEX sqlite_autoindex_soniq_jobs_1 \(id>\? AND id<\?\)/);
    expect(byId).toMatch(
      /SEARCH j USING INDEX sqlite_autoindex_soniq_finished_jobs_1 \(id>\? AND id<\?\)/,
    );
    expect(byId).not.toMatch(/TEMP B-TREE|SCAN j(\s|$)/m);
    // The windows: each an index-only walk of the primary key below the cursor.
    const cuts = plan(path, SQL.jobListCuts, { live: 1, finished: 1, beforeId: "~" });
    expect(cuts).toMatch(/SEARCH soniq_jobs USING COVERING INDEX sqlite_autoindex_soniq_jobs_1/);
    expect(cuts).toMatch(
      /SEARCH soniq_finished_jobs USING COVERING INDEX sqlite_autoindex_soniq_finished_jobs_1/,
    );
    expect(cuts).not.toMatch(/TEMP B-TREE|SCAN soniq/);
    const legacy = plan(path, SQL.jobListLegacy, {
      ...NO_FILTER,
      beforeMs: 1,
      beforeId: "~",
      limit: 10,
    });
    expect(legacy).toMatch(/MERGE \(UNION ALL\)/);
    expect(legacy).toMatch(
      /SEARCH j USING INDEX soniq_jobs_legacy_order \(\(created_at,id\)<\(\?,\?\)\)/,
    );
    expect(legacy).toMatch(/SEARCH j USING INDEX soniq_finished_jobs_legacy_order/);
    expect(legacy).not.toMatch(/TEMP B-TREE|SCAN j(\s|$)/m);
  });

  it("jobList › live, finished and legacy rows, page by page › UUIDv7 ids descending across both tables, then legacy rows by created_at", async () => {
    const { backend: b, path } = await fileBackend();
    const t0 = Date.now();
    const ids = Array.from({ length: 6 }, (_, i) => newJobId(t0 + i * 10));
    // ids[0], ids[2], ids[4] finish (finished table); the others stay queued.
    await completed(
      b,
      [0, 2, 4].map((i) => newJob({ id: ids[i] })),
      3600,
    );
    await b.jobEnqueue({ jobs: [1, 3, 5].map((i) => newJob({ id: ids[i] })) });
    // Legacy rows (version 4 ids) in both tables, written as an older version would have.
    const legacy = [
      { id: randomUUID(), created: 3000, table: "soniq_jobs", status: "queued" },
      { id: randomUUID(), created: 1000, table: "soniq_finished_jobs", status: "done" },
      { id: randomUUID(), created: 2000, table: "soniq_finished_jobs", status: "cancelled" },
    ];
    const db = new Database(path);
    for (const row of legacy) {
      db.prepare(
        `INSERT INTO ${row.table} (id, name, queue, args, status, priority, attempts, max_attempts,
           interruptions, scheduled_at, created_at, updated_at, finished_at, result_expires_at,
           start_known, uncharged_recoveries)
         VALUES (?, 'test.job', 'default', '{}', ?, 0, 0, 3, 0, ?, ?, ?, ?, ?, 1, 0)`,
      ).run(row.id, row.status, row.created, row.created, row.created, row.created, t0 + 3.6e6);
    }
    db.close();

    const expected = [...ids].reverse().concat(legacy.map((r) => r.id));
    // Legacy order: created_at descending (3000, 2000, 1000).
    expected.splice(6, 3, legacy[0]!.id, legacy[2]!.id, legacy[1]!.id);
    for (const limit of [1, 2, 4, 9, 20]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 20; pages += 1) {
        const page = await b.admin.jobList({ filter: {}, limit, cursor });
        seen.push(...page.items.map((j) => j.id));
        cursor = page.nextCursor;
        if (cursor === null) break;
      }
      expect(seen, `limit ${limit}`).toEqual(expected);
    }
    // A status filter reads only the tables it can match, in the same order.
    const done = await b.admin.jobList({ filter: { status: ["done"] }, limit: 10, cursor: null });
    expect(done.items.map((j) => j.id)).toEqual([ids[4], ids[2], ids[0], legacy[1]!.id]);
    // Counted by the rows (a creation bound): the legacy rows above were written by SQL, past
    // the counters that a status-only count reads.
    const byRows = { createdAfter: new Date(0) };
    expect(await b.admin.jobCount({ filter: { status: ["done"], ...byRows } })).toBe(4);
    expect(await b.admin.jobCount({ filter: { status: ["queued"], ...byRows } })).toBe(4);
    expect(await b.admin.jobCount({ filter: byRows })).toBe(9);
  });

  it("jobList › a filter that matches rarely › a page reads at most LIST_WINDOW rows of each table: a short page whose cursor continues below them", async () => {
    const { backend: b } = await fileBackend();
    const oldRare = newJob({ id: newJobId(), name: "rare" });
    await completed(b, [oldRare], 3600);
    await new Promise((r) => setTimeout(r, 3));
    const common = Array.from({ length: LIST_WINDOW + 10 }, () =>
      newJob({ id: newJobId(), name: "common" }),
    );
    await completed(b, common, 3600);
    await new Promise((r) => setTimeout(r, 3));
    const newRare = newJob({ id: newJobId(), name: "rare" });
    await b.jobEnqueue({ jobs: [newRare] });

    const first = await b.admin.jobList({ filter: { name: ["rare"] }, limit: 10, cursor: null });
    expect(first.items.map((j) => j.id)).toEqual([newRare.id]);
    expect(first.nextCursor).not.toBeNull();
    const second = await b.admin.jobList({
      filter: { name: ["rare"] },
      limit: 10,
      cursor: first.nextCursor,
    });
    expect(second.items.map((j) => j.id)).toEqual([oldRare.id]);
    expect(second.nextCursor).toBeNull();
    // Without a filter the same windows fill whole pages.
    const all = await b.admin.jobList({ filter: {}, limit: 10, cursor: null });
    expect(all.items).toHaveLength(10);
  });

  it("jobComplete › moves the row; a refused fence moves nothing; retention 0 keeps nothing", async () => {
    const b = memory();
    const kept = newJob({ id: newJobId(), dedupKey: "k-kept" });
    const dropped = newJob({ id: newJobId(), dedupKey: "k-dropped" });
    await b.jobEnqueue({ jobs: [kept, dropped] });
    const claims = await claimDue(b, 2);
    const claimOf = (id: string) => claims.find((c) => c.id === id)!;
    const stranger = { workerId: "w", claimToken: randomUUID() };
    expect(
      await b.jobComplete({
        id: kept.id,
        owner: stranger,
        result: null,
        resultRetentionSeconds: 60,
      }),
    ).toBe(false);
    expect(await b.jobGet({ id: kept.id })).toMatchObject({ status: "processing", attempts: 0 });
    expect(
      await b.jobCompleteMany({
        items: [
          { id: kept.id, owner: ownerOf(claimOf(kept.id)), result: "1" },
          {
            id: dropped.id,
            owner: ownerOf(claimOf(dropped.id)),
            result: "2",
            resultRetentionSeconds: 0,
          },
        ],
        resultRetentionSeconds: 60,
      }),
    ).toEqual([true, true]);
    const row = await b.jobGet({ id: kept.id });
    expect(row).toMatchObject({ status: "done", attempts: 1, result: "1" });
    expect(row!.resultExpiresAt!.getTime() - row!.finishedAt!.getTime()).toBe(60_000);
    expect(await b.jobGet({ id: dropped.id })).toBeNull();
    expect(await b.jobStats()).toMatchObject({ done: 1, queued: 0, processing: 0, total: 1 });
    // The kept job still holds its key; the dropped one's key is free.
    const again = [newJob({ dedupKey: "k-kept" }), newJob({ dedupKey: "k-dropped" })];
    expect(await b.jobEnqueue({ jobs: again })).toEqual([
      { id: kept.id, inserted: false },
      { id: again[1]!.id, inserted: true },
    ]);
  });

  it("dedup keys › held until the retention passes (the injected clock), then taken over and forgotten by the prune", async () => {
    let now = Date.UTC(2030, 0, 1);
    const b = memory(() => now);
    const first = newJob({ dedupKey: "k" });
    await completed(b, [first], 10);
    const early = newJob({ dedupKey: "k" });
    expect(await b.jobEnqueue({ jobs: [early] })).toEqual([{ id: first.id, inserted: false }]);
    now += 10_000;
    expect(await b.jobPruneFinished({})).toBe(1);
    expect(await b.jobGet({ id: first.id })).toBeNull();
    const late = newJob({ dedupKey: "k" });
    expect(await b.jobEnqueue({ jobs: [late] })).toEqual([{ id: late.id, inserted: true }]);
    // A job cancelled with a retention holds its key as a completed one does.
    expect(await b.jobCancel({ id: late.id, retentionSeconds: 5 })).toBe(true);
    expect(await b.jobGet({ id: late.id })).toMatchObject({ status: "cancelled" });
    const blocked = newJob({ dedupKey: "k" });
    expect(await b.jobEnqueue({ jobs: [blocked] })).toEqual([{ id: late.id, inserted: false }]);
    now += 5_000;
    const taker = newJob({ dedupKey: "k" });
    // Its hold passed: taken over before any prune.
    expect(await b.jobEnqueue({ jobs: [taker] })).toEqual([{ id: taker.id, inserted: true }]);
  });

  it("admin › retry now of a finished job moves it back and holds its key again; delete releases it", async () => {
    const b = memory();
    const job = newJob({ dedupKey: "rk" });
    await completed(b, [job], 3600);
    expect(await b.admin.jobRetryNow({ id: job.id })).toBe("done");
    expect(await b.jobGet({ id: job.id })).toMatchObject({
      status: "queued",
      result: null,
      finishedAt: null,
      resultExpiresAt: null,
      attempts: 1,
    });
    const dup = newJob({ dedupKey: "rk" });
    expect(await b.jobEnqueue({ jobs: [dup] })).toEqual([{ id: job.id, inserted: false }]);
    const [claimed] = await claimDue(b, 1);
    await b.jobComplete({
      id: claimed!.id,
      owner: ownerOf(claimed!),
      result: null,
      resultRetentionSeconds: 3600,
    });
    expect(await b.admin.jobDelete({ id: job.id })).toBe("done");
    expect(await b.jobGet({ id: job.id })).toBeNull();
    expect(await b.jobEnqueue({ jobs: [dup] })).toEqual([{ id: dup.id, inserted: true }]);
    expect(await b.admin.jobDelete({ id: job.id })).toBe("not_found");
  });

  it("dead letters › release the key; a replay takes it again, or fails while another job holds it", async () => {
    const b = memory();
    const job = newJob({ dedupKey: "dk" });
    await b.jobEnqueue({ jobs: [job] });
    const [c] = await claimDue(b, 1);
    const owner = ownerOf(c!);
    expect(
      await b.jobDeadLetter({ id: job.id, owner, error: "x", reason: "r", countAttempt: true }),
    ).toBe(true);
    const other = newJob({ dedupKey: "dk" });
    expect(await b.jobEnqueue({ jobs: [other] })).toEqual([{ id: other.id, inserted: true }]);
    await expect(b.deadLetterReplay({ id: job.id })).rejects.toMatchObject({
      code: "DEDUP_CONFLICT",
      details: { id: job.id, holder: other.id, dedupKey: "dk" },
    });
    expect(await b.jobCancel({ id: other.id, retentionSeconds: 0 })).toBe(true);
    expect(await b.deadLetterReplay({ id: job.id })).toBe(true);
    const dup = newJob({ dedupKey: "dk" });
    expect(await b.jobEnqueue({ jobs: [dup] })).toEqual([{ id: job.id, inserted: false }]);
  });
});
