// Finished jobs in daily partitions, forgotten by the prune mark (migration 011,
// src/backends/postgres/finished-partitions.ts; docs/backends.md, "Forgetting finished jobs").
// Rows are made by the product (enqueue, claim, complete); time passing is simulated by moving a
// row's result_expires_at back (an UPDATE of the partition key moves the row between
// partitions), never by sleeping.
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { buildStatements } from "../../src/backends/postgres/sql.js";
import { loadMigrations } from "../../src/backends/shared/migrations.js";
import { newJobId } from "../../src/jobs/job-id.js";
import { newJob, ownerOf } from "../contract/helpers.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 4 });
afterAll(() => pool.end());

const DAY_MS = 86_400_000;

/** The UTC day `offset` days from today as YYYYMMDD. */
function dayName(offset: number): string {
  return new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10).replaceAll("-", "");
}

/** `n` jobs enqueued, claimed and completed with `retention` seconds; their ids. */
async function finish(b: Backend, n: number, retention: number, queue = "q"): Promise<string[]> {
  const jobs = Array.from({ length: n }, () => newJob({ id: newJobId(), queue }));
  await b.jobEnqueue({ jobs });
  const ids: string[] = [];
  while (ids.length < n) {
    const claimed = await b.jobClaim({ workerId: "w", queues: [queue], limit: n });
    if (claimed.length === 0) throw new Error("nothing claimed");
    for (const c of claimed) {
      await b.jobComplete({
        id: c.id,
        owner: ownerOf(c),
        result: "1",
        resultRetentionSeconds: retention,
      });
      ids.push(c.id);
    }
  }
  return ids;
}

describePostgres("postgres: finished jobs in daily partitions", () => {
  const schemas = usePostgresSchemas();
  const open: PostgresBackend[] = [];
  afterAll(async () => {
    for (const b of open) await b.close();
  });

  async function make(): Promise<{
    b: PostgresBackend;
    t: (name: string) => string;
    schema: string;
  }> {
    const schema = schemas.next();
    const b = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 6 });
    open.push(b);
    await b.setup();
    return { b, schema, t: (name) => `"${schema}"."${name}"` };
  }

  /** The partitions of the store, by name. */
  async function partitions(schema: string): Promise<string[]> {
    const { rows } = await pool.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
       WHERE i.inhparent = $1::regclass ORDER BY 1`,
      [`"${schema}".soniq_finished_store`],
    );
    return rows.map((r) => r.name);
  }

  /** Makes the daily partition `offset` days from today (a past day: the leader never does). */
  async function pastPartition(schema: string, offset: number): Promise<string> {
    const day = new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10);
    const next = new Date(Date.now() + (offset + 1) * DAY_MS).toISOString().slice(0, 10);
    const name = `soniq_finished_store_p${dayName(offset)}`;
    await pool.query(
      `CREATE TABLE "${schema}"."${name}" PARTITION OF "${schema}".soniq_finished_store
       FOR VALUES FROM ('${day} 00:00:00+00') TO ('${next} 00:00:00+00')`,
    );
    return name;
  }

  /** Sets the expiry of `ids` to noon (UTC) of the day `offset` days from today. */
  async function expireOn(schema: string, ids: string[], offset: number): Promise<void> {
    await pool.query(
      `UPDATE "${schema}".soniq_finished_store
       SET result_expires_at = (date_trunc('day', now() AT TIME ZONE 'UTC')
         + make_interval(days => $2::int) + interval '12 hours') AT TIME ZONE 'UTC'
       WHERE id = ANY($1::uuid[])`,
      [ids, offset],
    );
  }

  /** The finished jobs the reads show equal the counters. */
  async function countsExact(b: Backend, schema: string): Promise<void> {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${schema}".soniq_finished_jobs WHERE status = 'done'`,
    );
    const stats = await b.jobStats();
    expect(stats.done).toBe(rows[0]?.n);
    const listed = await b.admin.jobCount({ filter: { status: ["done"] } });
    expect(listed).toBe(rows[0]?.n);
  }

  it("a fresh setup › has today's and the next days' partitions and a default one", async () => {
    const { schema } = await make();
    const names = await partitions(schema);
    expect(names).toContain(`soniq_finished_store_p${dayName(0)}`);
    expect(names).toContain(`soniq_finished_store_p${dayName(9)}`);
    expect(names).toContain("soniq_finished_store_default");
  });

  it("prune › advances the mark over expired rows, counts them gone, then drops their whole partition", async () => {
    const { b, schema, t } = await make();
    const old = await pastPartition(schema, -2);
    const gone = await finish(b, 5, 3600);
    const kept = await finish(b, 3, 3600);
    await expireOn(schema, gone, -2);
    const inOld = await pool.query(`SELECT count(*)::int AS n FROM ${t(old)}`);
    expect(inOld.rows[0].n).toBe(5);
    expect(await b.jobPruneFinished({ limit: 2 })).toBe(2);
    // The rows passed are unreadable at once, though still in their partition.
    const mark = await pool.query(`SELECT expires_at FROM ${t("soniq_prune_mark")}`);
    expect(mark.rows[0].expires_at).toBeInstanceOf(Date);
    expect(await partitions(schema)).toContain(old);
    expect((await b.jobStats()).done).toBe(6);
    expect(await b.jobPruneFinished({ limit: 10 })).toBe(3); // caught up: partitions maintained
    expect(await b.jobPruneFinished({})).toBe(0);
    expect(await partitions(schema)).not.toContain(old);
    for (const id of gone) expect(await b.jobGet({ id })).toBeNull();
    for (const id of kept) expect((await b.jobGet({ id }))?.status).toBe("done");
    await countsExact(b, schema);
  });

  it("partitions ahead › rows of a day in the default partition move into that day's new partition", async () => {
    const { b, schema, t } = await make();
    const ids = await finish(b, 4, 20 * 86_400); // beyond the 10 days setup made: default
    const inDefault = await pool.query(
      `SELECT count(*)::int AS n FROM ${t("soniq_finished_store_default")}`,
    );
    expect(inDefault.rows[0].n).toBe(4);
    expect(await b.jobPruneFinished({ retentionSeconds: 30 * 86_400 })).toBe(0);
    const names = await partitions(schema);
    expect(names).toContain(`soniq_finished_store_p${dayName(32)}`);
    const after = await pool.query(
      `SELECT count(*)::int AS n FROM ${t("soniq_finished_store_default")}`,
    );
    expect(after.rows[0].n).toBe(0);
    const where = await pool.query<{ part: string }>(
      `SELECT DISTINCT tableoid::regclass::text AS part FROM ${t("soniq_finished_store")}`,
    );
    expect(where.rows.map((r) => r.part)).toEqual([
      expect.stringContaining(`soniq_finished_store_p${dayName(20)}`),
    ]);
    for (const id of ids) expect((await b.jobGet({ id }))?.status).toBe("done");
    await countsExact(b, schema);
  });

  it("beyond the horizon › a completion lands in the default partition and is forgotten (row-deleted) later", async () => {
    const { b, schema, t } = await make();
    const [id] = await finish(b, 1, 400 * 86_400);
    if (!id) throw new Error("no job");
    const place = await pool.query(
      `SELECT tableoid::regclass::text AS part FROM ${t("soniq_finished_store")} WHERE id = $1`,
      [id],
    );
    expect(place.rows[0].part).toContain("soniq_finished_store_default");
    // Its expiry comes (yesterday: no daily partition for that day, so it stays in the default).
    await expireOn(schema, [id], -1);
    expect((await b.jobGet({ id }))?.status).toBe("done"); // expired, not pruned: readable
    expect(await b.jobPruneFinished({})).toBe(1);
    expect(await b.jobGet({ id })).toBeNull();
    const left = await pool.query(`SELECT count(*)::int AS n FROM ${t("soniq_finished_store")}`);
    expect(left.rows[0].n).toBe(0);
    await countsExact(b, schema);
  });

  it("pruning by partition while listing › pages continue across the DROP: no error, nothing twice, no kept job missing", async () => {
    const { b, schema } = await make();
    await pastPartition(schema, -3);
    const forgotten = await finish(b, 15, 3600);
    await expireOn(schema, forgotten, -3);
    const kept = await finish(b, 15, 3600);
    const seen: string[] = [];
    let page = await b.admin.jobList({ filter: {}, limit: 4 });
    seen.push(...page.items.map((j) => j.id));
    // A reader holds the table (an open transaction that read it): the drop must not wait.
    const reader = await pool.connect();
    try {
      await reader.query("BEGIN");
      await reader.query(`SELECT count(*) FROM "${schema}".soniq_finished_jobs`);
      const started = Date.now();
      expect(await b.jobPruneFinished({})).toBe(15);
      expect(Date.now() - started).toBeLessThan(5000); // did not queue behind the reader
      expect(await partitions(schema)).toContain(`soniq_finished_store_p${dayName(-3)}`);
      await reader.query("COMMIT");
    } finally {
      reader.release();
    }
    expect(await b.jobPruneFinished({})).toBe(0); // now the drop gets its lock
    expect(await partitions(schema)).not.toContain(`soniq_finished_store_p${dayName(-3)}`);
    while (page.nextCursor !== null) {
      page = await b.admin.jobList({ filter: {}, limit: 4, cursor: page.nextCursor });
      seen.push(...page.items.map((j) => j.id));
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of kept) expect(seen).toContain(id);
    for (const id of seen) expect(kept.includes(id) || forgotten.includes(id)).toBe(true);
    await countsExact(b, schema);
  });

  it("run again and delete racing a prune › each row counted gone once; counts equal the reads", async () => {
    const { b, schema } = await make();
    for (let round = 0; round < 3; round++) {
      const ids = await finish(b, 12, 3600, `q${round}`);
      await expireOn(schema, ids, -1);
      const actions = ids.map((id, i) =>
        i % 2 === 0 ? b.admin.jobDelete({ id }) : b.admin.jobRetryNow({ id }),
      );
      const prunes = [b.jobPruneFinished({ limit: 5 }), b.jobPruneFinished({})];
      await Promise.all([...actions, ...prunes]);
      await b.jobPruneFinished({});
      await countsExact(b, schema);
      for (const id of ids) {
        const row = await b.jobGet({ id });
        expect(row === null || row.status === "queued").toBe(true);
      }
      // The jobs run again are live: claim and drop them for the next round.
      for (const c of await b.jobClaim({ workerId: "w", queues: [`q${round}`], limit: 20 })) {
        await b.jobComplete({
          id: c.id,
          owner: ownerOf(c),
          result: null,
          resultRetentionSeconds: 0,
        });
      }
    }
  });

  it("a worker of schema version 10 › its prune statement still works through the view, never counting a row twice", async () => {
    const { b, schema, t } = await make();
    const ids = await finish(b, 4, 3600);
    await expireOn(schema, ids, -1);
    expect(await b.jobPruneFinished({ limit: 2 })).toBe(2);
    // Migration 010's pruneFinished, as that version runs it (counts left out: same CTE shape).
    const old = await pool.query<{ n: number }>(
      `WITH pruned AS (
         DELETE FROM ${t("soniq_finished_jobs")} WHERE id IN (
           SELECT id FROM ${t("soniq_finished_jobs")} WHERE result_expires_at <= now() LIMIT $1::int)
         RETURNING queue, status)
       SELECT count(*)::int AS n FROM pruned`,
      [null],
    );
    expect(old.rows[0]?.n).toBe(2); // only the two the mark had not passed
    // 010's reads: by id through the view.
    const got = await pool.query(`SELECT id FROM ${t("soniq_finished_jobs")} WHERE id = ANY($1)`, [
      ids,
    ]);
    expect(got.rowCount).toBe(0);
  });

  it("upgrade › a database at migration 010 filled with finished rows › nothing lost, counts kept, then forgotten by partition", async () => {
    const schema = schemas.next();
    const t = (name: string) => `"${schema}"."${name}"`;
    const c = await pool.connect();
    try {
      await c.query(`CREATE SCHEMA "${schema}"`);
      await c.query(`SET search_path TO "${schema}"`);
      await c.query(`CREATE TABLE soniq_migrations (version integer PRIMARY KEY, name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now())`);
      for (const m of loadMigrations("postgres").filter((m) => m.version <= 10)) {
        await c.query(m.sql);
        await c.query("INSERT INTO soniq_migrations (version, name) VALUES ($1, $2)", [
          m.version,
          m.file,
        ]);
      }
    } finally {
      await c.query("RESET search_path");
      c.release();
    }
    // As 010 writes them: 300 done rows expiring from two days ago to 20 days ahead, counted.
    await pool.query(
      `INSERT INTO ${t("soniq_finished_jobs")} (id, name, queue, args, status, priority, attempts,
         max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at,
         finished_at, result, result_expires_at, start_known, uncharged_recoveries)
       SELECT gen_random_uuid(), 'old.job', 'q', '{}'::json, 'done', 0, 1, 5, 0, now(), now(),
              now(), now(), now(), '1'::json,
              now() + make_interval(hours => (i * 1.6)::int - 48), true, 0
       FROM generate_series(0, 299) AS i`,
    );
    await pool.query(
      `INSERT INTO ${t("soniq_job_counts")} (queue, kind, bucket, writer, n)
       VALUES ('q', 'done', '-infinity', 0, 300)`,
    );
    const before = await pool.query<{ id: string }>(
      `SELECT id FROM ${t("soniq_finished_jobs")} ORDER BY id`,
    );
    const b = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 4 });
    open.push(b);
    await b.setup();
    const after = await pool.query<{ id: string }>(
      `SELECT id FROM ${t("soniq_finished_store")} ORDER BY id`,
    );
    expect(after.rows).toEqual(before.rows);
    expect((await b.jobStats()).done).toBe(300);
    const sample = before.rows.filter((_, i) => i % 37 === 0);
    for (const r of sample) expect((await b.jobGet({ id: r.id }))?.status).toBe("done");
    const expired = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${t("soniq_finished_store")} WHERE result_expires_at <= now()`,
    );
    expect(await b.jobPruneFinished({})).toBe(expired.rows[0]?.n);
    await countsExact(b, schema);
    const left = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${t("soniq_finished_store_default")}
       WHERE result_expires_at <= now()`,
    );
    expect(left.rows[0]?.n).toBe(0); // the default partition's forgotten rows were deleted
  });

  it("completions while partitions are made and dropped › every completion lands and is readable; counts exact", async () => {
    const { b, schema, t } = await make();
    await pastPartition(schema, -2);
    const old = await finish(b, 10, 3600, "old");
    await expireOn(schema, old, -2);
    const completing = (async () => {
      const ids: string[] = [];
      // Retention 15 days: into the day the maintenance below makes (setup made 10 days).
      for (let i = 0; i < 8; i++) ids.push(...(await finish(b, 5, 15 * 86_400, "new")));
      return ids;
    })();
    const maintaining = (async () => {
      for (let i = 0; i < 4; i++) await b.jobPruneFinished({ retentionSeconds: 30 * 86_400 });
    })();
    const [ids] = await Promise.all([completing, maintaining]);
    await b.jobPruneFinished({ retentionSeconds: 30 * 86_400 });
    for (const id of ids) expect((await b.jobGet({ id }))?.status).toBe("done");
    for (const id of old) expect(await b.jobGet({ id })).toBeNull();
    expect(await partitions(schema)).not.toContain(`soniq_finished_store_p${dayName(-2)}`);
    const inDefault = await pool.query(
      `SELECT count(*)::int AS n FROM ${t("soniq_finished_store_default")}`,
    );
    expect(inDefault.rows[0].n).toBe(0);
    await countsExact(b, schema);
  });

  it.each(["delete", "run again"] as const)(
    "%s waiting on a prune that passes its row › the row is counted gone once, by the prune",
    async (action) => {
      const { b, schema } = await make();
      const [id] = await finish(b, 1, 3600);
      if (!id) throw new Error("no job");
      await expireOn(schema, [id], -1);
      const sql = buildStatements(schema);
      const prune = await pool.connect();
      try {
        // A prune in progress: it holds the mark.
        await prune.query("BEGIN");
        await prune.query(sql.lockMark);
        const acting =
          action === "delete" ? b.admin.jobDelete({ id }) : b.admin.jobRetryNow({ id });
        // Until the action waits for the mark (bounded: it must come to wait).
        for (let i = 0; i < 500; i++) {
          const { rows } = await pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND query LIKE '%shared_mark%'
               AND strpos(query, $1) > 0`,
            // Only this test's schema: test files run in parallel on one server.
            [`"${schema}"`],
          );
          if ((rows[0]?.n ?? 0) > 0) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        const passed = await prune.query<{ pruned: number }>(sql.pruneFinished, [null]);
        expect(passed.rows[0]?.pruned).toBe(1);
        await prune.query("COMMIT");
        expect(await acting).toBe("not_found");
      } finally {
        prune.release();
      }
      expect(await b.jobGet({ id })).toBeNull();
      await countsExact(b, schema);
      expect((await b.jobStats()).done).toBe(0);
    },
  );
});
