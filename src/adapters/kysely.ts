/**
 * `soniq/kysely`: transactional enqueue inside a Kysely transaction (docs/transactions.md#kysely).
 * Kysely is an optional peer dependency of Soniq, loaded only by this entry point.
 */
import { CompiledQuery, type Kysely } from "kysely";
import type { PgQueryable } from "../backends/contract/index.js";

/**
 * Wraps a Kysely transaction (`db.transaction().execute(async (trx) => …)`, or a controlled
 * transaction) as the `connection` option of `enqueue`, `enqueueMany` and `Soniq.enqueue`: the
 * jobs are inserted by the transaction's own connection, so they exist if and only if the
 * transaction commits, and workers are woken at commit (never before, never on rollback).
 *
 * Soniq's statements run as raw compiled queries without the instance's plugins
 * (`withoutPlugins()`), so a `CamelCasePlugin` does not rename the columns Soniq reads. Given a
 * Kysely that is not in a transaction, each enqueue commits on its own.
 *
 * PostgreSQL only (a `PostgresDialect`, or any dialect speaking to PostgreSQL with `$n`
 * parameters); the Soniq instance must use PostgreSQL too, else enqueue throws `SoniqError`
 * `UNSUPPORTED`. Errors of the statements (e.g. the transaction was already rolled back) are
 * Kysely's/the driver's, unchanged.
 * @param trx - The transaction (any `Kysely<DB>`; a `Transaction<DB>` is one).
 * @returns A connection to pass as `{ connection }`; it holds no state of its own.
 */
export function fromKysely<DB>(trx: Kysely<DB>): PgQueryable {
  const plain = trx.withoutPlugins();
  return {
    async query(text: string, values?: unknown[]) {
      const result = await plain.executeQuery(CompiledQuery.raw(text, values ?? []));
      return { rows: result.rows as unknown[], rowCount: result.rows.length };
    },
  };
}
