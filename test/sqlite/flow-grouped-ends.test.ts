// Workflows on SQLite, a completion's flow work done once per statement (migration 019;
// docs/performance.md, "The `fanin` workload"): the store's completion transaction counts each
// batch and each dependant down once for all the jobs it moved, ends their edges in one statement
// and releases at 0, with the row triggers skipped while it holds soniq_flow_grouping. The other
// ends (dead-letter, cancel) still count down through the triggers; a file upgraded from 018 with
// a batch half settled finishes it once; the grouping row is never left behind.
import { join } from "node:path";
import Database from "better-sqlite3";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/backends/shared/migrations.js";
import { SQL } from "../../src/backends/sqlite/sql.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { Soniq } from "../../src/index.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

afterAll(() => removeTempDirs());

const WAITING = 253402300799999;

/**
 * A file at every migration up to `upTo` but `without` (each recorded as setup records it): the
 * store's current statements (its inserts write 020's column) need the later migrations, which
 * do not depend on 019.
 */
function fileAt(upTo: number, without?: number): string {
  const path = join(tempDir("soniq-sqlite-grouped-"), "q.db");
  const db = new Database(path);
  db.exec(`CREATE TABLE soniq_migrations (version INTEGER NOT NULL PRIMARY KEY,
    name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
  for (const m of loadMigrations("sqlite").filter(
    (m) => m.version <= upTo && m.version !== without,
  )) {
    db.exec(m.sql);
    db.prepare("INSERT INTO soniq_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
      m.version,
      m.name,
      Date.now(),
    );
  }
  db.close();
  return path;
}

function open(path: string): { backend: SqliteBackend; soniq: Soniq; db: Database.Database } {
  const backend = new SqliteBackend({ path });
  const soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
  const db = new Database(path);
  db.pragma("busy_timeout = 5000");
  return { backend, soniq, db };
}

/** The callbacks' nodes: role, pending, and whether the job is still waiting (null: not live). */
function callbacks(db: Database.Database): unknown[] {
  return db
    .prepare(
      `SELECT n.role, n.pending, j.scheduled_at = ${WAITING} AS waiting
       FROM soniq_flow_nodes AS n LEFT JOIN soniq_jobs AS j ON j.id = n.job_id
       WHERE n.role IN ('on_complete', 'on_failure') ORDER BY n.role`,
    )
    .all();
}

function batchNode(db: Database.Database): unknown {
  return db
    .prepare(
      "SELECT pending, members_left, members_failed FROM soniq_flow_nodes WHERE role = 'batch'",
    )
    .get();
}

function ends(db: Database.Database): unknown[] {
  return db.prepare("SELECT kind, id, outcome FROM soniq_flow_ends ORDER BY seq").all();
}

async function claim(backend: SqliteBackend, limit: number) {
  return backend.jobClaim({ workerId: "w", queues: null, limit });
}

async function completeAll(
  backend: SqliteBackend,
  jobs: Array<{ id: string; claimToken: string }>,
) {
  return backend.jobCompleteMany({
    items: jobs.map((j) => ({
      id: j.id,
      owner: { workerId: "w", claimToken: j.claimToken },
      result: JSON.stringify({ from: j.id }),
    })),
    resultRetentionSeconds: 3600,
  });
}

describe("sqlite: grouped completion ends (migration 019)", () => {
  it("one completion › a flow's children, a batch's members and a plain job › each dependant counted down once, released, edges ended with results, ends recorded once", async () => {
    const path = fileAt(Number.POSITIVE_INFINITY);
    const { backend, soniq, db } = open(path);
    try {
      const job = soniq.job<{ n?: number }, void>({ name: "g.job", handler: () => {} });
      const flow = await soniq.flow({
        job,
        args: {},
        children: [
          { job, args: { n: 1 } },
          { job, args: { n: 2 } },
        ],
      });
      const batch = await soniq.batch({
        jobs: Array.from({ length: 4 }, (_, n) => ({ job, args: { n } })),
        onComplete: { job, args: {} },
        onFailure: { job, args: {} },
      });
      await job.enqueue({});
      const claimed = await claim(backend, 20);
      expect(claimed.length).toBe(2 + 4 + 1);
      expect(await completeAll(backend, claimed)).toEqual(Array(7).fill(true));

      // The root and onComplete are due; onFailure (every member done) cancelled once.
      const root = db
        .prepare("SELECT scheduled_at <> ? AS due FROM soniq_jobs WHERE id = ?")
        .get(WAITING, flow.id);
      expect(root).toEqual({ due: 1 });
      expect(callbacks(db)).toEqual([
        { role: "on_complete", pending: 0, waiting: 0 },
        { role: "on_failure", pending: 0, waiting: null },
      ]);
      expect(
        db
          .prepare("SELECT status, last_error FROM soniq_finished_jobs WHERE id = ?")
          .get(batch.callbacks.onFailure),
      ).toEqual({ status: "cancelled", last_error: "every member of the batch ended done" });
      expect(batchNode(db)).toEqual({ pending: 0, members_left: 0, members_failed: 0 });
      // Every edge ended done, with its job's result as stored.
      const edges = db
        .prepare("SELECT dep_id, dep_state, dep_result FROM soniq_job_deps ORDER BY dep_id")
        .all() as Array<{ dep_id: string; dep_state: string; dep_result: string | null }>;
      const memberEdges = edges.filter((e) => e.dep_id !== batch.id);
      expect(memberEdges.length).toBe(2 + 4 * 2);
      for (const e of memberEdges) {
        expect(e).toEqual({
          dep_id: e.dep_id,
          dep_state: "done",
          dep_result: JSON.stringify({ from: e.dep_id }),
        });
      }
      expect(ends(db)).toEqual([{ kind: "batch", id: batch.id, outcome: "succeeded" }]);

      // The root and onComplete in one completion: the flow's end once.
      const second = await claim(backend, 20);
      expect(second.map((j) => j.id).sort()).toEqual([flow.id, batch.callbacks.onComplete].sort());
      expect(await completeAll(backend, second)).toEqual([true, true]);
      expect(ends(db)).toEqual([
        { kind: "batch", id: batch.id, outcome: "succeeded" },
        { kind: "flow", id: flow.id, outcome: "done" },
      ]);
      expect(
        db.prepare("SELECT sum(n) AS n FROM soniq_job_counts WHERE kind = 'cancelled'").get(),
      ).toEqual({ n: 1 });
      expect(db.prepare("SELECT count(*) AS n FROM soniq_flow_grouping").get()).toEqual({ n: 0 });
    } finally {
      db.close();
      await soniq.close();
    }
  });

  it("end paths › completed, dead-lettered, cancelled members › each counts its batch and callback down; the batch ends failed once, onFailure released", async () => {
    const path = fileAt(Number.POSITIVE_INFINITY);
    const { backend, soniq, db } = open(path);
    try {
      const job = soniq.job<{ n?: number }, void>({ name: "p.job", handler: () => {} });
      const batch = await soniq.batch({
        jobs: Array.from({ length: 3 }, (_, n) => ({ job, args: { n } })),
        onComplete: { job, args: {} },
        onFailure: { job, args: {} },
      });
      const [a, b, c] = batch.ids as [string, string, string];
      // c is cancelled while queued (the cancel's move, the triggers).
      expect(await backend.jobCancel({ id: c, retentionSeconds: 3600 })).toBe(true);
      expect(batchNode(db)).toEqual({ pending: 0, members_left: 2, members_failed: 1 });
      expect(callbacks(db)).toEqual([
        { role: "on_complete", pending: 2, waiting: 1 },
        { role: "on_failure", pending: 2, waiting: 1 },
      ]);
      const claimed = await claim(backend, 10);
      const byId = new Map(claimed.map((j) => [j.id, j]));
      // a completes (the grouped path).
      expect(await completeAll(backend, [byId.get(a) as (typeof claimed)[0]])).toEqual([true]);
      expect(batchNode(db)).toEqual({ pending: 0, members_left: 1, members_failed: 1 });
      expect(callbacks(db)).toEqual([
        { role: "on_complete", pending: 1, waiting: 1 },
        { role: "on_failure", pending: 1, waiting: 1 },
      ]);
      // b is dead-lettered (the dead-letter move, the triggers).
      const owner = { workerId: "w", claimToken: (byId.get(b) as (typeof claimed)[0]).claimToken };
      expect(
        await backend.jobDeadLetter({
          id: b,
          owner,
          error: "boom",
          reason: "max_attempts_exceeded",
          countAttempt: true,
        }),
      ).toBe(true);
      expect(batchNode(db)).toEqual({ pending: 0, members_left: 0, members_failed: 2 });
      expect(callbacks(db)).toEqual([
        { role: "on_complete", pending: 0, waiting: 0 },
        { role: "on_failure", pending: 0, waiting: 0 },
      ]);
      expect(ends(db)).toEqual([{ kind: "batch", id: batch.id, outcome: "failed" }]);
      expect(db.prepare("SELECT count(*) AS n FROM soniq_flow_grouping").get()).toEqual({ n: 0 });
    } finally {
      db.close();
      await soniq.close();
    }
  });

  it("upgrade › a batch half settled under 018 › finished after 019: callbacks released or cancelled once, the batch ends once", async () => {
    const path = fileAt(Number.POSITIVE_INFINITY, 19);
    const { backend, soniq, db } = open(path);
    try {
      const job = soniq.job<{ n?: number }, void>({ name: "u.job", handler: () => {} });
      const batch = await soniq.batch({
        jobs: Array.from({ length: 20 }, (_, n) => ({ job, args: { n } })),
        onComplete: { job, args: {} },
        onFailure: { job, args: {} },
      });
      // Ten members completed as the 018 store did: its move and delete, one job at a time, the
      // row triggers counting down.
      const first = await claim(backend, 10);
      expect(first.length).toBe(10);
      const move = db.prepare(SQL.completeMove);
      const remove = db.prepare(SQL.deleteJob);
      db.transaction(() => {
        for (const j of first) {
          expect(
            move.get({
              id: j.id,
              workerId: "w",
              claimToken: j.claimToken,
              result: null,
              retentionMs: 3_600_000,
            }),
          ).toBeDefined();
          remove.run({ id: j.id });
        }
      }).immediate();
      expect(batchNode(db)).toEqual({ pending: 0, members_left: 10, members_failed: 0 });
      expect(callbacks(db)).toEqual([
        { role: "on_complete", pending: 10, waiting: 1 },
        { role: "on_failure", pending: 10, waiting: 1 },
      ]);

      await backend.setup();
      expect(db.prepare("SELECT version FROM soniq_migrations WHERE version = 19").get()).toEqual({
        version: 19,
      });
      const rest = await claim(backend, 10);
      expect(rest.length).toBe(10);
      expect(await completeAll(backend, rest.slice(0, 4))).toEqual(Array(4).fill(true));
      expect(callbacks(db)).toEqual([
        { role: "on_complete", pending: 6, waiting: 1 },
        { role: "on_failure", pending: 6, waiting: 1 },
      ]);
      expect(await completeAll(backend, rest.slice(4))).toEqual(Array(6).fill(true));
      expect(batchNode(db)).toEqual({ pending: 0, members_left: 0, members_failed: 0 });
      expect(callbacks(db)).toEqual([
        { role: "on_complete", pending: 0, waiting: 0 },
        { role: "on_failure", pending: 0, waiting: null },
      ]);
      expect(ends(db)).toEqual([{ kind: "batch", id: batch.id, outcome: "succeeded" }]);
      expect(
        db.prepare("SELECT sum(n) AS n FROM soniq_job_counts WHERE kind = 'cancelled'").get(),
      ).toEqual({ n: 1 });
      const released = await claim(backend, 10);
      expect(released.map((j) => j.id)).toEqual([batch.callbacks.onComplete]);
    } finally {
      db.close();
      await soniq.close();
    }
  });
});
