// `npm run schema:dump`: rewrites test/schema/postgres.sql and test/schema/sqlite.sql, the fully
// migrated schema of each engine, from a fresh setup (test/schema/schema.test.ts checks them).
//
// PostgreSQL is read from the catalogue (tables, columns with types, defaults and generated
// expressions, constraints, indexes, functions, triggers; each sorted by name, columns in table
// order) rather than with
// pg_dump, whose output changes with its version. SQLite is `sqlite_master`'s SQL text, sorted.
// PostgreSQL: TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test; a fresh schema
// is created and dropped.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { PostgresBackend } from "../src/backends/postgres/postgres-backend.js";
import { SqliteBackend } from "../src/backends/sqlite/sqlite-backend.js";

/** The committed dumps, relative to the repository root. */
export const DUMP_PATHS = {
  postgres: "test/schema/postgres.sql",
  sqlite: "test/schema/sqlite.sql",
} as const;

function header(engine: keyof typeof DUMP_PATHS, migrations: readonly string[]): string {
  return [
    `-- The ${engine === "postgres" ? "PostgreSQL" : "SQLite"} schema after every migration, as a fresh \`setup()\` leaves it.`,
    "-- Written by `npm run schema:dump`; checked by test/schema/schema.test.ts. Do not edit.",
    `-- Migrations: ${migrations.join(", ")}`,
    "",
  ].join("\n");
}

/**
 * The schema `schema` of the PostgreSQL database at `client`, as normalised SQL text: the schema
 * name is left out, so two schemas migrated alike give the same text.
 */
export async function dumpPostgresSchema(client: pg.Client, schema: string): Promise<string> {
  const q = async <T extends pg.QueryResultRow>(sql: string): Promise<T[]> =>
    (await client.query<T>(sql, [schema])).rows;
  // A function made with `SET search_path FROM CURRENT` names the schema in its search_path.
  const strip = (text: string) =>
    text
      .replaceAll(`${schema}.`, "")
      .replaceAll(`search_path TO '${schema}'`, "search_path TO <schema>");
  const out: string[] = [];

  const { rows: migrations } = await client.query<{ name: string }>(
    `SELECT name FROM ${pg.escapeIdentifier(schema)}.soniq_migrations ORDER BY version`,
  );
  out.push(
    header(
      "postgres",
      migrations.map((m) => m.name),
    ),
  );

  const tables = await q<{ oid: number; name: string }>(
    `SELECT c.oid, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
     ORDER BY c.relname`,
  );
  const columns = await q<{ table: string; line: string }>(
    `SELECT c.relname AS table,
            a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
              || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
              || COALESCE(CASE WHEN a.attgenerated = 's'
                               THEN ' GENERATED ALWAYS AS (' || pg_get_expr(d.adbin, d.adrelid)
                                    || ') STORED'
                               ELSE ' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid) END, '') AS line
     FROM pg_attribute a
     JOIN pg_class c ON c.oid = a.attrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
       AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY c.relname, a.attnum`,
  );
  const constraints = await q<{ table: string; name: string; def: string }>(
    `SELECT c.relname AS table, k.conname AS name, pg_get_constraintdef(k.oid) AS def
     FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND NOT c.relispartition ORDER BY c.relname, k.conname`,
  );
  for (const table of tables) {
    const lines = [
      ...columns.filter((c) => c.table === table.name).map((c) => c.line),
      ...constraints
        .filter((k) => k.table === table.name)
        .map((k) => `CONSTRAINT ${k.name} ${k.def}`),
    ];
    out.push(`CREATE TABLE ${table.name} (\n  ${lines.join(",\n  ")}\n);\n`);
  }
  // The finished store's partitions are named by day (migration 011): left out, as are their
  // indexes, so the dump is the same whatever the day it is made.
  const views = await q<{ name: string; def: string }>(
    `SELECT c.relname AS name, pg_get_viewdef(c.oid, true) AS def FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind = 'v' ORDER BY c.relname`,
  );
  for (const v of views) out.push(`CREATE VIEW ${v.name} AS\n${strip(v.def).trimEnd()}\n`);

  const indexes = await q<{ def: string }>(
    `SELECT pg_get_indexdef(i.indexrelid) AS def
     FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
     JOIN pg_namespace n ON n.oid = x.relnamespace
     JOIN pg_class t ON t.oid = i.indrelid
     WHERE n.nspname = $1 AND NOT t.relispartition
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
     ORDER BY x.relname`,
  );
  out.push(`${indexes.map((i) => `${strip(i.def)};`).join("\n")}\n`);

  const functions = await q<{ def: string }>(
    `SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p
     JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = $1 ORDER BY p.proname, pg_get_function_identity_arguments(p.oid)`,
  );
  for (const f of functions) out.push(`${strip(f.def).trimEnd()};\n`);

  const triggers = await q<{ def: string }>(
    `SELECT pg_get_triggerdef(t.oid) AS def FROM pg_trigger t
     JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND NOT t.tgisinternal ORDER BY c.relname, t.tgname`,
  );
  out.push(`${triggers.map((t) => `${strip(t.def)};`).join("\n")}\n`);
  return out.join("\n");
}

/**
 * SQLite keeps `ALTER TABLE … ADD COLUMN` as `…\n, col TYPE)` at the end of the table's SQL; this
 * puts each added column on a line of its own, as if it had been declared in `CREATE TABLE`.
 */
function addedColumnsOnTheirOwnLines(sql: string): string {
  const match = /\n, ([^\n]*)\)((?: STRICT)?)$/.exec(sql);
  if (!match) return sql;
  const added = (match[1] as string).split(/, (?=[a-z_]+ [A-Z])/);
  return `${sql.slice(0, match.index)}${added.map((column) => `,\n  ${column}`).join("")}\n)${match[2]}`;
}

/** The schema of the SQLite database at `path`: `sqlite_master`'s SQL, tables first, by name. */
export function dumpSqliteSchema(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    const migrations = db
      .prepare("SELECT name FROM soniq_migrations ORDER BY version")
      .all() as Array<{ name: string }>;
    const objects = db
      .prepare(
        `SELECT sql FROM sqlite_master WHERE sql IS NOT NULL
         ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, name`,
      )
      .all() as Array<{ sql: string }>;
    const body = objects.map((o) => `${addedColumnsOnTheirOwnLines(o.sql)};\n`).join("\n");
    return `${header(
      "sqlite",
      migrations.map((m) => m.name),
    )}\n${body}`;
  } finally {
    db.close();
  }
}

/** The PostgreSQL dump of a fresh, fully migrated schema (created, then dropped). */
export async function freshPostgresDump(connectionString: string): Promise<string> {
  const schema = `soniq_dump_${randomBytes(6).toString("hex")}`;
  const backend = new PostgresBackend({ connectionString, schema, poolSize: 1 });
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await backend.setup();
    return await dumpPostgresSchema(client, schema);
  } finally {
    await backend.close();
    await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    await client.end();
  }
}

/** The SQLite dump of a fresh, fully migrated database file (created in a temporary folder). */
export async function freshSqliteDump(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "soniq-schema-dump-"));
  try {
    const path = join(dir, "schema.db");
    const backend = new SqliteBackend({ path });
    await backend.setup();
    await backend.close();
    return dumpSqliteSchema(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const url = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const root = new URL("../", import.meta.url);
  writeFileSync(new URL(DUMP_PATHS.sqlite, root), await freshSqliteDump());
  console.log(`wrote ${DUMP_PATHS.sqlite}`);
  writeFileSync(new URL(DUMP_PATHS.postgres, root), await freshPostgresDump(url));
  console.log(`wrote ${DUMP_PATHS.postgres}`);
}
