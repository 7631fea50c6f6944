/**
 * The one migration loader of both SQL engines: the file-name rule (`NNN_name.sql`), the
 * version-clash check and the order, over the migration text embedded in the package at build
 * time (migrations.generated.ts, written by scripts/embed-migrations.ts from
 * `src/backends/<engine>/migrations/*.sql`). Applying them — the transaction and the lock — is
 * each engine's `migrate.ts`.
 */
import { EMBEDDED_MIGRATIONS } from "./migrations.generated.js";

/** The engines that have migrations. */
export type MigrationEngine = "postgres" | "sqlite";

/** The engines that have migrations, in a fixed order. */
export const MIGRATION_ENGINES: readonly MigrationEngine[] = ["postgres", "sqlite"];

/** A migration file as written: its file name and its SQL text. */
export interface MigrationFile {
  /** The file name, e.g. `001_initial.sql`. */
  file: string;
  /** The SQL text; may hold several statements; no `BEGIN`/`COMMIT`; must not name a schema. */
  sql: string;
}

/** One versioned migration. */
export interface Migration extends MigrationFile {
  /** The leading number of the file name (`001_initial.sql` → 1). */
  version: number;
  /** The file name without `.sql` (`001_initial`). */
  name: string;
}

/** A migration file name: three digits, `_`, then lower-case letters, digits and `_`. */
export const MIGRATION_FILE_PATTERN = /^(\d{3})_[a-z0-9_]+\.sql$/;

/**
 * Checks and orders one engine's migration files.
 * @returns The migrations, by ascending version.
 * @throws Error when a file name does not match {@link MIGRATION_FILE_PATTERN} or two files
 * share a version (both are packaging bugs, caught when the package is built).
 */
export function orderMigrations(
  engine: MigrationEngine,
  files: readonly MigrationFile[],
): Migration[] {
  const migrations = files.map(({ file, sql }) => {
    const match = MIGRATION_FILE_PATTERN.exec(file);
    if (!match) {
      throw new Error(
        `the ${engine} migration file ${JSON.stringify(file)} is not named NNN_name.sql (three digits, then lower-case letters, digits or _)`,
      );
    }
    return { version: Number(match[1]), name: file.slice(0, -".sql".length), file, sql };
  });
  migrations.sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i += 1) {
    const [before, after] = [migrations[i - 1], migrations[i]];
    if (before && after && before.version === after.version) {
      throw new Error(
        `the ${engine} migrations ${before.file} and ${after.file} share version ${after.version}`,
      );
    }
  }
  return migrations;
}

const loaded = new Map<MigrationEngine, readonly Migration[]>();

/**
 * The migrations of `engine` embedded in this build, by ascending version (checked once, then
 * cached).
 * @throws Error as {@link orderMigrations} (only for a hand-edited generated module).
 */
export function loadMigrations(engine: MigrationEngine): readonly Migration[] {
  let migrations = loaded.get(engine);
  if (migrations === undefined) {
    migrations = orderMigrations(engine, EMBEDDED_MIGRATIONS[engine]);
    loaded.set(engine, migrations);
  }
  return migrations;
}
