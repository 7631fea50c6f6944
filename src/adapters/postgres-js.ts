/**
 * `soniq/postgres`: transactional enqueue inside a postgres.js transaction
 * (docs/transactions.md#postgresjs). postgres (postgres.js) is an optional peer dependency of
 * Soniq; this entry point only imports its types.
 */
import type postgres from "postgres";
import type { PgQueryable } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";

/**
 * What {@link fromPostgresJs} needs of postgres.js: `unsafe` (a `TransactionSql` from
 * `sql.begin(async (tx) => …)` has it, as does the `Sql` instance itself).
 */
export interface PostgresJsUnsafe {
  /** Runs one statement with `$n` parameters. */
  unsafe(
    query: string,
    parameters?: postgres.ParameterOrJSON<never>[],
  ): postgres.PendingQuery<postgres.Row[]>;
}

/** Soniq names every column it reads in lower snake case; another name is a `transform`'s. */
const UNTRANSFORMED_COLUMN = /^[a-z_][a-z0-9_]*$/;

/**
 * Wraps a postgres.js transaction (`sql.begin(async (tx) => …)`) as the `connection` option of
 * `enqueue`, `enqueueMany` and `Soniq.enqueue`: the jobs are inserted by the transaction's own
 * connection, so they exist if and only if the transaction commits, and workers are woken at
 * commit (never before, never on rollback).
 *
 * Soniq's statements run through `tx.unsafe(text, values)` with `.transform(false)` (postgres.js
 * 4), so an instance's `transform` (e.g. `postgres.camel`) does not rename the columns Soniq
 * reads. postgres.js 3 has no `.transform(false)`: there, an instance whose `transform` renames
 * columns is refused (after the statement ran in the transaction, which the error then rolls
 * back when it leaves `sql.begin`). Given the `Sql` instance outside a transaction, each enqueue
 * commits on its own.
 *
 * The Soniq instance must use PostgreSQL, else enqueue throws `SoniqError` `UNSUPPORTED`.
 * @throws SoniqError `UNSUPPORTED` at enqueue: postgres.js 3 with a column-renaming `transform`.
 * Errors of the statements are postgres.js's, unchanged (e.g. `TRANSACTION_ROLLED_BACK` after
 * `tx.rollback()`).
 * @param tx - The transaction.
 * @returns A connection to pass as `{ connection }`; it holds no state of its own.
 */
export function fromPostgresJs(tx: PostgresJsUnsafe): PgQueryable {
  return {
    async query(text: string, values?: unknown[]) {
      // Soniq sends strings, numbers, null and arrays of them: every one is a postgres.js
      // parameter; the cast only bridges the instance's custom-types parameter.
      const pending = tx.unsafe(text, (values ?? []) as postgres.ParameterOrJSON<never>[]);
      const canSkipTransform = typeof pending.transform === "function";
      const result = await (canSkipTransform ? pending.transform(false) : pending);
      const columns = (result as { columns?: ReadonlyArray<{ name: string }> }).columns ?? [];
      if (!canSkipTransform && columns.some((c) => !UNTRANSFORMED_COLUMN.test(c.name))) {
        throw new SoniqError(
          "UNSUPPORTED",
          "fromPostgresJs: postgres.js 3 renamed Soniq's columns (the instance has a `transform`); use postgres.js 4, or an instance without `transform`",
        );
      }
      const rows: unknown[] = Array.from(result);
      return { rows, rowCount: rows.length };
    },
  };
}
