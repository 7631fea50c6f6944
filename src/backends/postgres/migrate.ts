/**
 * The PostgreSQL migration runner: applies the migrations of the shared loader
 * (`backends/shared/migrations.ts`) once each, in order, recording them in `soniq_migrations`,
 * inside one transaction that holds an advisory lock keyed on the schema — so two processes
 * running `setup()` at once are safe.
 */
import type { Pool } from "pg";
import { loadMigrations } from "../shared/migrations.js";
import { checkOut } from "./checkout.js";
import { migrationLockKey, quoteIdent, validateSchemaName } from "./identifiers.js";

/**
 * Creates `schema` if needed and applies every migration not yet recorded in its
 * `soniq_migrations` table, all in one transaction holding `pg_advisory_xact_lock` keyed on the
 * schema. A concurrent run waits for the lock, then finds nothing left to do. On any error the
 * transaction is rolled back (nothing half-applied) and the error is rethrown.
 * @returns The versions applied by this call (empty when the schema was current).
 */
export async function migrate(pool: Pool, schema: string): Promise<number[]> {
  validateSchemaName(schema);
  const migrations = loadMigrations("postgres");
  const { client, release } = await checkOut(pool);
  let broken = false;
  try {
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock($1::bigint)", [migrationLockKey(schema)]);
      // CREATE SCHEMA needs the CREATE privilege on the database even when the schema exists,
      // so only run it when the schema is missing (a DBA may have created it beforehand).
      const exists = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
      if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${quoteIdent(schema)}`);
      await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS soniq_migrations (
           version    integer     PRIMARY KEY,
           name       text        NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
      const { rows } = await client.query<{ version: number }>(
        "SELECT version FROM soniq_migrations",
      );
      const done = new Set(rows.map((row) => row.version));
      const applied: number[] = [];
      for (const migration of migrations) {
        if (done.has(migration.version)) continue;
        await client.query(migration.sql);
        await client.query("INSERT INTO soniq_migrations (version, name) VALUES ($1, $2)", [
          migration.version,
          // The file name, as every PostgreSQL schema has recorded it since version 1.
          migration.file,
        ]);
        applied.push(migration.version);
      }
      await client.query("COMMIT");
      return applied;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw err;
    }
  } finally {
    release(broken);
  }
}
