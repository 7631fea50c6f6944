/**
 * Direct SQL on a real-process test's store (a SQLite file or a PostgreSQL schema), for samplers
 * and checks that read the rows workers write: `table(name)` qualifies a table, `keyOf(alias)` is
 * a row's flow-control key, `ms(column)` a timestamp column as milliseconds since the epoch (the
 * database's clock: PostgreSQL `timestamptz`, SQLite integer milliseconds).
 */
import Database from "better-sqlite3";
import pg from "pg";

/** SQL on one store. */
export interface StoreSql {
  kind: "postgres" | "sqlite";
  /** Rows of one statement (no parameters). */
  all<T>(sql: string): Promise<T[]>;
  /** Runs statements (several, separated by `;`). */
  exec(sql: string): Promise<void>;
  /** `name` qualified with the schema (PostgreSQL) or as is (SQLite). */
  table(name: string): string;
  /** The `meta` key of the rows aliased `alias` (SQL text). */
  keyOf(alias: string): string;
  /** `column` as milliseconds since the epoch, a number (SQL text). */
  ms(column: string): string;
  close(): Promise<void>;
}

/** Opens `env.SONIQ_DATABASE_URL` (and `env.SONIQ_SCHEMA`) for direct SQL. */
export function storeSql(env: Record<string, string | undefined>): StoreSql {
  const url = env.SONIQ_DATABASE_URL ?? "";
  if (url.startsWith("sqlite:")) {
    const db = new Database(url.slice("sqlite:".length), { timeout: 30_000 });
    return {
      kind: "sqlite",
      all: async <T>(sql: string) => db.prepare(sql).all() as T[],
      exec: async (sql) => {
        db.exec(sql);
      },
      table: (name) => name,
      keyOf: (alias) => `json_extract(${alias}.meta, '$.concurrency.key')`,
      ms: (column) => column,
      close: async () => {
        db.close();
      },
    };
  }
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const schema = `"${env.SONIQ_SCHEMA ?? "public"}"`;
  return {
    kind: "postgres",
    all: async <T>(sql: string) => (await pool.query(sql)).rows as T[],
    exec: async (sql) => {
      await pool.query(sql);
    },
    table: (name) => `${schema}.${name}`,
    keyOf: (alias) => `(${alias}.meta -> 'concurrency' ->> 'key')`,
    ms: (column) => `(extract(epoch FROM ${column}) * 1000)::float8`,
    close: () => pool.end(),
  };
}
