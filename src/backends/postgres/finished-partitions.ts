/**
 * The physical side of forgetting finished jobs on PostgreSQL (docs/backends.md, "Forgetting
 * finished jobs: daily partitions and the prune mark"; migration 011).
 *
 * `soniq_finished_store` is partitioned by range of `result_expires_at`, one partition per UTC
 * day (`soniq_finished_store_pYYYYMMDD` = [day 00:00 UTC, next day 00:00 UTC)) plus
 * `soniq_finished_store_default` for expiries no daily partition covers. The prune only advances
 * the mark (`soniq_prune_mark`); {@link maintainFinishedPartitions}, run by the maintenance
 * leader's prune, then:
 *
 * 1. drops every daily partition whose day is over (no completion can write into it: a row's
 *    expiry is its completion time plus a positive retention) and that holds no row above the
 *    mark (all its rows are forgotten and already counted as gone) — under `LOCK … NOWAIT`, so it never waits in the
 *    lock queue (where completions and reads would queue behind it); a lock it cannot get now is
 *    tried again at the next prune;
 * 2. deletes the default partition's rows at or below the mark (at most `limit`);
 * 3. makes the daily partitions from today to today + `aheadDays` that are missing, moving the
 *    default partition's rows of that day into the new table before attaching it (PostgreSQL
 *    refuses a partition whose range the default partition already holds rows of), under a
 *    `NOWAIT` SHARE lock of the table: no completion is under way while a day is made (one
 *    routed to the default partition before would fail after), and those that start meanwhile
 *    wait the few milliseconds it takes, then go to the new partition.
 */
import type pg from "pg";
import type { PgConnection } from "./connection.js";
import { quoteIdent } from "./identifiers.js";

/** Days of daily partitions made ahead at most, whatever the retention (see {@link aheadDaysFor}). */
export const MAX_AHEAD_DAYS = 62;

/** Days made ahead beyond the longest retention (today's partition and a day's slack). */
export const AHEAD_SLACK_DAYS = 2;

/**
 * SQLSTATEs of a step to try again later: lock_not_available (a `NOWAIT` lock held by someone
 * else, or the lock timeout), duplicate_table / undefined_table (another process made or dropped
 * the partition since it was listed).
 */
const TRY_LATER = new Set(["55P03", "42P07", "42P01"]);

/**
 * Days of daily partitions to keep made ahead for a longest retention of `retentionSeconds`
 * (seconds): the retention in days rounded up, plus {@link AHEAD_SLACK_DAYS}, at most
 * {@link MAX_AHEAD_DAYS}. A job kept longer lands in the default partition (row-deleted once
 * forgotten). The cap bounds the partitions a read by id probes (every one of them).
 */
export function aheadDaysFor(retentionSeconds: number): number {
  const days = Math.ceil(Math.max(0, retentionSeconds) / 86_400) + AHEAD_SLACK_DAYS;
  return Math.min(MAX_AHEAD_DAYS, days);
}

/** What one {@link maintainFinishedPartitions} did. */
export interface FinishedPartitionsReport {
  /** Daily partitions dropped (table names). */
  dropped: string[];
  /** Daily partitions of days over that could not be looked at now (a lock was held). */
  dropDeferred: string[];
  /** Rows of the default partition deleted (they were below the mark). */
  defaultDeleted: number;
  /** Daily partitions made (table names). */
  created: string[];
  /** Rows moved from the default partition into the partitions made. */
  movedFromDefault: number;
}

/** Options of {@link maintainFinishedPartitions}. */
export interface MaintainFinishedPartitionsOptions {
  /** Days after today (UTC) to have daily partitions for (≥ 0; {@link aheadDaysFor}). */
  aheadDays: number;
  /** Rows of the default partition deleted at most (default 10,000). */
  limit?: number;
}

/** The UTC day `day` (YYYY-MM-DD) as a partition name suffix and bounds. */
function dayPartition(store: string, day: string): { name: string; lo: string; hi: string } {
  const start = new Date(`${day}T00:00:00Z`);
  const next = new Date(start.getTime() + 86_400_000).toISOString().slice(0, 10);
  return {
    name: `${store}_p${day.replaceAll("-", "")}`,
    lo: `${day} 00:00:00+00`,
    hi: `${next} 00:00:00+00`,
  };
}

/**
 * See the module comment. Each step is its own short transaction; a step that cannot take its
 * lock at once is left for the next call.
 * @throws the driver's error for anything but a lock not available at once.
 */
export async function maintainFinishedPartitions(
  conn: PgConnection,
  schema: string,
  options: MaintainFinishedPartitionsOptions,
): Promise<FinishedPartitionsReport> {
  const s = quoteIdent(schema);
  const storeName = "soniq_finished_store";
  const store = `${s}.${quoteIdent(storeName)}`;
  const deflt = `${s}.${quoteIdent(`${storeName}_default`)}`;
  const mark = `${s}.${quoteIdent("soniq_prune_mark")}`;
  const report: FinishedPartitionsReport = {
    dropped: [],
    dropDeferred: [],
    defaultDeleted: 0,
    created: [],
    movedFromDefault: 0,
  };

  // The daily partitions, whether each is wholly below the mark, and today (UTC).
  const { rows } = await conn.run<{ name: string; passed: boolean; today: string }>(
    `SELECT c.relname AS name,
            (to_date(right(c.relname, 8), 'YYYYMMDD') + 1)::timestamp AT TIME ZONE 'UTC'
              <= now() AS passed,
            to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS today
     FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
     WHERE i.inhparent = $1::regclass AND c.relname ~ '_p[0-9]{8}$'
     UNION ALL SELECT NULL, NULL, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
    [`${s}.${quoteIdent(storeName)}`],
  );
  const today = rows[0]?.today ?? new Date().toISOString().slice(0, 10);
  const existing = new Set(rows.flatMap((r) => (r.name === null ? [] : [r.name])));
  const passed = rows.flatMap((r) => (r.name !== null && r.passed ? [r.name] : []));

  // 1. Drop the partitions wholly forgotten. NOWAIT: never queue behind a long read, and so
  //    never make a completion wait behind this DROP.
  if (passed.length > 0) {
    let forgotten: string[] = [];
    const dropped = await nowait(conn, async (client) => {
      await client.query(`LOCK TABLE ONLY ${store} IN ACCESS EXCLUSIVE MODE NOWAIT`);
      const list = passed.map((name) => `${s}.${quoteIdent(name)}`).join(", ");
      await client.query(`LOCK TABLE ${list} IN ACCESS EXCLUSIVE MODE NOWAIT`);
      // Under the lock nothing changes: a partition whose day is over (no completion can write
      // into it) and that has no row above the mark left is wholly forgotten.
      for (const name of passed) {
        const { rows: left } = await client.query<{ left: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM ${s}.${quoteIdent(name)} AS f
             WHERE (f.result_expires_at, f.id) > (SELECT m.expires_at, m.id FROM ${mark} AS m)) AS left`,
        );
        if (left[0]?.left === false) forgotten.push(name);
      }
      if (forgotten.length > 0) {
        await client.query(
          `DROP TABLE ${forgotten.map((name) => `${s}.${quoteIdent(name)}`).join(", ")}`,
        );
      }
    });
    if (dropped) report.dropped.push(...forgotten);
    else {
      forgotten = [];
      report.dropDeferred.push(...passed);
    }
  }

  // 2. The default partition's forgotten rows, row by row (only long retentions land there).
  const deleted = await conn.run<{ n: number }>(
    `WITH gone AS (
       DELETE FROM ${deflt} WHERE ctid = ANY(ARRAY(
         SELECT d.ctid FROM ${deflt} AS d
         WHERE (d.result_expires_at, d.id) <= (SELECT m.expires_at, m.id FROM ${mark} AS m)
         LIMIT $1::int))
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [options.limit ?? 10_000],
  );
  report.defaultDeleted = deleted.rows[0]?.n ?? 0;

  // 3. The partitions ahead, each made beside the table, filled with its default rows, attached.
  const start = new Date(`${today}T00:00:00Z`).getTime();
  for (let i = 0; i <= Math.max(0, Math.floor(options.aheadDays)); i++) {
    const day = new Date(start + i * 86_400_000).toISOString().slice(0, 10);
    const p = dayPartition(storeName, day);
    if (existing.has(p.name)) continue;
    const table = `${s}.${quoteIdent(p.name)}`;
    let moved = 0;
    const made = await nowait(conn, async (client) => {
      // No insert may be under way: one already routed to the default partition would, once
      // this commits, write there a row of the day the default no longer takes, and fail. SHARE
      // lets reads go on; inserts wait for this short transaction (then route afresh). ATTACH
      // scans the default partition and holds it exclusively. Both now or not at all.
      await client.query(`LOCK TABLE ONLY ${store} IN SHARE MODE NOWAIT`);
      await client.query(`LOCK TABLE ${deflt} IN ACCESS EXCLUSIVE MODE NOWAIT`);
      await client.query(
        `CREATE TABLE ${table} (LIKE ${store} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`,
      );
      const r = await client.query(
        `WITH m AS (DELETE FROM ${deflt} WHERE result_expires_at >= $1::timestamptz
                      AND result_expires_at < $2::timestamptz RETURNING *)
         INSERT INTO ${table} SELECT * FROM m`,
        [p.lo, p.hi],
      );
      moved = r.rowCount ?? 0;
      await client.query(
        `ALTER TABLE ${store} ATTACH PARTITION ${table} FOR VALUES FROM ('${p.lo}') TO ('${p.hi}')`,
      );
    });
    if (made) {
      report.created.push(p.name);
      report.movedFromDefault += moved;
    }
  }
  return report;
}

/**
 * Runs `fn` in a transaction with a short `lock_timeout` as a safety net; `false` when a lock
 * was not available (`NOWAIT` or the timeout): nothing done, try again later.
 */
async function nowait(
  conn: PgConnection,
  fn: (client: pg.PoolClient) => Promise<void>,
): Promise<boolean> {
  try {
    await conn.transaction(async (client) => {
      await client.query("SET LOCAL lock_timeout = '200ms'");
      await fn(client);
    });
    return true;
  } catch (err) {
    const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
    const code = e?.code === "SCHEMA_NOT_READY" ? e.cause?.code : e?.code;
    if (typeof code === "string" && TRY_LATER.has(code)) return false;
    throw err;
  }
}
