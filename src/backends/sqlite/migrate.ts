/**
 * Versioned schema migrations for the SQLite backend (DESIGN.md §4: migrations as `.sql`).
 *
 * The files live in `./migrations/` next to this module — `src/backends/sqlite/migrations/`
 * when the TypeScript sources run (tests, tsx), `dist/backends/sqlite/migrations/` after
 * `npm run build` (scripts/post-build.mjs copies them).
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type Database from "better-sqlite3";
import { NOW_MS } from "./clock.js";

/** One migration file. */
export interface Migration {
  /** The leading number of the file name, e.g. `1` for `001_initial.sql`. */
  version: number;
  /** The file name without `.sql`, e.g. `001_initial`; recorded in `soniq_migrations.name`. */
  name: string;
  /** The SQL text (several statements, no `BEGIN`/`COMMIT`). */
  sql: string;
}

const MIGRATIONS_DIR = new URL("./migrations/", import.meta.url);
const FILE_NAME = /^(\d+)_[A-Za-z0-9_-]+\.sql$/;

/**
 * Reads the migration files, in version order.
 * @throws Error when two files share a version number (a packaging bug), or the directory is
 * missing (a build that did not copy the `.sql` files).
 */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(fileURLToPath(dir))
    .map((file) => ({ file, match: FILE_NAME.exec(file) }))
    .filter((entry): entry is { file: string; match: RegExpExecArray } => entry.match !== null)
    .map(({ file, match }) => ({
      version: Number(match[1]),
      name: file.slice(0, -".sql".length),
      sql: readFileSync(new URL(file, dir), "utf8"),
    }))
    .sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i += 1) {
    if (migrations[i]?.version === migrations[i - 1]?.version) {
      throw new Error(`two SQLite migrations share version ${migrations[i]?.version}`);
    }
  }
  return migrations;
}

/**
 * Applies every migration not yet recorded in `soniq_migrations`, in version order, each
 * recorded once with its `applied_at` (milliseconds since the epoch, database clock).
 *
 * Everything runs in one `BEGIN IMMEDIATE` transaction: a second process running this at the
 * same time waits for the write lock (up to the connection's busy timeout), then finds the
 * migrations recorded and applies nothing. A failing migration rolls back every change.
 *
 * @returns The names of the migrations this call applied (empty when up to date).
 * @throws The driver's error when a migration fails or the lock is not obtained within the
 * busy timeout (`SQLITE_BUSY`).
 */
export function migrate(db: Database.Database, migrations: readonly Migration[]): string[] {
  const run = db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS soniq_migrations (
      version    INTEGER NOT NULL PRIMARY KEY,
      name       TEXT    NOT NULL,
      applied_at INTEGER NOT NULL
    ) STRICT`);
    const rows = db.prepare("SELECT version FROM soniq_migrations").all() as Array<{
      version: number;
    }>;
    const applied = new Set(rows.map((row) => row.version));
    const record = db.prepare(
      `INSERT INTO soniq_migrations (version, name, applied_at) VALUES (?, ?, ${NOW_MS})`,
    );
    const done: string[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name);
      done.push(migration.name);
    }
    return done;
  });
  return run.immediate();
}
