/**
 * A PostgreSQL schema as an earlier version of Soniq left it, for the upgrade tests: every
 * migration numbered below `below`, each recorded in `soniq_migrations` as `setup()` records it.
 */
import type pg from "pg";
import { loadMigrations } from "../../src/backends/shared/migrations.js";

/** Creates `schema` (which must not exist) at the version before migration `below`. */
export async function postgresSchemaBefore(
  pool: pg.Pool,
  schema: string,
  below: number,
): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query(`CREATE SCHEMA "${schema}"`);
    await c.query(`SET search_path TO "${schema}"`);
    await c.query(`CREATE TABLE soniq_migrations (version integer PRIMARY KEY, name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now())`);
    for (const m of loadMigrations("postgres").filter((m) => m.version < below)) {
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
}
