/**
 * The PostgreSQL migration runner: applies the numbered `.sql` files of `./migrations/` once
 * each, in order, recording them in `soniq_migrations`, inside one transaction that holds an
 * advisory lock keyed on the schema — so two processes running `setup()` at once are safe.
 */
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Pool } from "pg";
import { SoniqError } from "../../errors.js";
import { migrationLockKey, quoteIdent, validateSchemaName } from "./identifiers.js";

/** One versioned migration file. */
export interface Migration {
  /** The leading number of the file name (`001_initial.sql` → 1). */
  version: number;
  /** The file name. */
  name: string;
  /** The SQL text; may hold several statements; must not name the schema. */
  sql: string;
}

/** The folder of the `.sql` files, next to this module in `src/` and in `dist/` alike. */
const MIGRATIONS_DIR = new URL("./migrations/", import.meta.url);

const FILE_PATTERN = /^(\d+)_[a-z0-9_]+\.sql$/;

let cached: Promise<Migration[]> | undefined;

/**
 * Reads the migration files, sorted by version (cached after the first read).
 * @throws SoniqError `SCHEMA_NOT_READY` when the folder is missing or two files share a version.
 */
export function loadMigrations(): Promise<Migration[]> {
  cached ??= readMigrations().catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}

async function readMigrations(): Promise<Migration[]> {
  let files: string[];
  try {
    files = await readdir(MIGRATIONS_DIR);
  } catch (err) {
    throw new SoniqError(
      "SCHEMA_NOT_READY",
      `cannot read the PostgreSQL migrations at ${fileURLToPath(MIGRATIONS_DIR)} (was the package built with its .sql files?)`,
      { cause: err },
    );
  }
  const migrations: Migration[] = [];
  for (const name of files) {
    const match = FILE_PATTERN.exec(name);
    if (!match) continue;
    const sql = await readFile(new URL(name, MIGRATIONS_DIR), "utf8");
    migrations.push({ version: Number(match[1]), name, sql });
  }
  migrations.sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i += 1) {
    if (migrations[i]?.version === migrations[i - 1]?.version) {
      throw new SoniqError(
        "SCHEMA_NOT_READY",
        `two PostgreSQL migrations share version ${migrations[i]?.version}`,
      );
    }
  }
  return migrations;
}

/**
 * Creates `schema` if needed and applies every migration not yet recorded in its
 * `soniq_migrations` table, all in one transaction holding `pg_advisory_xact_lock` keyed on the
 * schema. A concurrent run waits for the lock, then finds nothing left to do. On any error the
 * transaction is rolled back (nothing half-applied) and the error is rethrown.
 * @returns The versions applied by this call (empty when the schema was current).
 */
export async function migrate(pool: Pool, schema: string): Promise<number[]> {
  validateSchemaName(schema);
  const migrations = await loadMigrations();
  const client = await pool.connect();
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
          migration.name,
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
    client.release(broken);
  }
}
