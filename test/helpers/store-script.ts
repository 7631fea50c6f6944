/**
 * Raw SQL on a test store, over a connection of its own (better-sqlite3 on the SQLite file, a pg
 * client with `search_path` set to the PostgreSQL schema): for test-only triggers that inject a
 * fault or a delay into a product statement, and for counting rows.
 */
import Database from "better-sqlite3";
import pg from "pg";
import type { StoreAddress } from "./test-backends.js";

/** One script per engine; the PostgreSQL one runs with `search_path` set to the store's schema. */
export interface EngineSql {
  sqlite: string;
  postgres: string;
}

/** Runs the script for the store `address` reaches (`databaseUrl` `sqlite:<path>`, or a schema). */
export async function runStoreSql(address: StoreAddress, sql: EngineSql): Promise<void> {
  if (address.schema === undefined) {
    const db = new Database(address.databaseUrl.slice("sqlite:".length));
    try {
      db.exec(sql.sqlite);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: address.databaseUrl });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${address.schema}"`);
    await client.query(sql.postgres);
  } finally {
    await client.end();
  }
}

/** The number of rows of `table` (a name of the store's schema) in the store `address` reaches. */
export async function countStoreRows(address: StoreAddress, table: string): Promise<number> {
  if (address.schema === undefined) {
    const db = new Database(address.databaseUrl.slice("sqlite:".length), { readonly: true });
    try {
      return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: address.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT count(*)::int AS n FROM "${address.schema}".${table}`,
    );
    return rows[0].n as number;
  } finally {
    await client.end();
  }
}
