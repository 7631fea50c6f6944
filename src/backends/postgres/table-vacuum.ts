/**
 * Soniq's own vacuum of its busiest tables on PostgreSQL (docs/backends.md, "Vacuum when autovacuum does not"), run by
 * the maintenance leader's prune once it is caught up.
 *
 * A queue's tables are updated and deleted all day: every job leaves two or three dead row
 * versions in `soniq_jobs`, every completion updates a counter row, every heartbeat a worker row.
 * PostgreSQL's autovacuum normally reclaims them (the live table's thresholds are set for a queue
 * table by migration 010). When autovacuum is switched off (some CI and benchmark servers do) or
 * lags behind other tables, nothing does: the soak (`npm run soak`) measured the live table on
 * such a server growing 4 KiB a second at 20 jobs/s, 60,000 dead rows after 20 minutes, its
 * per-queue claim index to 1.7 MiB for 30 live rows — and every claim walks those dead entries.
 *
 * So the prune vacuums each Soniq table whose dead rows reach {@link VACUUM_DEAD_ROWS} plus a
 * fifth of its live rows (autovacuum's own rule, with a larger base) and that no vacuum (manual
 * or auto) touched in the last {@link VACUUM_MIN_INTERVAL_SECONDS} seconds. `SKIP_LOCKED`: a
 * table another vacuum holds is left to it. When autovacuum keeps up, the test finds nothing to
 * do: one read of `pg_stat_user_tables` per prune.
 */
import type { PgConnection } from "./connection.js";
import { quoteIdent } from "./identifiers.js";

/** Dead rows a table holds (beyond a fifth of its live rows) before the prune vacuums it. */
export const VACUUM_DEAD_ROWS = 1_000;

/** Seconds since a table's last vacuum (manual or auto) before the prune vacuums it again. */
export const VACUUM_MIN_INTERVAL_SECONDS = 60;

/**
 * Vacuums the Soniq tables of `schema` that need it (see the module comment).
 * @returns The tables vacuumed (names), empty when none needed it.
 * @throws the driver's error (the caller's prune logs it and tries again next tick).
 */
export async function vacuumBusyTables(conn: PgConnection, schema: string): Promise<string[]> {
  const { rows } = await conn.run<{ name: string }>(
    `SELECT relname AS name FROM pg_stat_user_tables
      WHERE schemaname = $1 AND relname LIKE 'soniq\\_%'
        AND n_dead_tup >= $2 + n_live_tup / 5
        AND coalesce(greatest(last_vacuum, last_autovacuum), '-infinity')
            < now() - make_interval(secs => $3)
      ORDER BY relname`,
    [schema, VACUUM_DEAD_ROWS, VACUUM_MIN_INTERVAL_SECONDS],
  );
  if (rows.length === 0) return [];
  const tables = rows.map((r) => `${quoteIdent(schema)}.${quoteIdent(r.name)}`).join(", ");
  await conn.run(`VACUUM (SKIP_LOCKED) ${tables}`, []);
  return rows.map((r) => r.name);
}
