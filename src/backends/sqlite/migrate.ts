/**
 * The SQLite migration runner: applies the migrations of the shared loader
 * (`backends/shared/migrations.ts`) not yet recorded in `soniq_migrations`, in one
 * `BEGIN IMMEDIATE` transaction, so two processes running `setup()` at once are safe.
 */
import type Database from "better-sqlite3";
import type { Migration } from "../shared/migrations.js";
import { NOW_MS } from "./clock.js";

/**
 * Applies every migration not yet recorded in `soniq_migrations`, in version order, each
 * recorded once with its `applied_at` (milliseconds since the epoch, database clock).
 *
 * Everything runs in one `BEGIN IMMEDIATE` transaction: a second process running this at the
 * same time waits for the write lock (up to the connection's busy timeout), then finds the
 * migrations recorded and applies nothing. A failing migration rolls back every change.
 *
 * @returns The names (`001_initial`, recorded in `soniq_migrations.name`) of the migrations this call applied (empty when up to date).
 * @throws The driver's error when a migration fails or the lock is not obtained within the
 * busy timeout (`SQLITE_BUSY`).
 */
export function migrate(db: Database.Database, migrations: readonly Migration[]): string[] {
  const run = db.transaction(() => {
    // Kept flush left: SQLite stores this text as written (test/schema/sqlite.sql shows it).
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
