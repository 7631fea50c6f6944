/**
 * `soniq/drizzle`: transactional enqueue inside a Drizzle transaction on PostgreSQL
 * (docs/transactions.md#drizzle). drizzle-orm is an optional peer dependency of Soniq, loaded
 * only by this entry point.
 */
import { type SQL, sql } from "drizzle-orm";
import type { PgQueryable } from "../backends/contract/index.js";
import { arrayLiteral } from "./array-literal.js";
import { splitPositionalParameters } from "./positional-parameters.js";

/**
 * What {@link fromDrizzle} needs of a Drizzle transaction (or database): `execute` of an `SQL`
 * object. Drizzle's `PgTransaction` and `PgDatabase` have it for every PostgreSQL driver.
 */
export interface DrizzleExecutor {
  /** Runs one statement; node-postgres answers `{ rows }`, postgres.js the rows themselves. */
  execute(query: SQL): PromiseLike<unknown>;
}

/** The rows of an `execute` answer: `{ rows }` (node-postgres, Neon, …) or an array (postgres.js). */
function rowsOf(result: unknown): unknown[] {
  if (Array.isArray(result)) return result;
  const rows = (result as { rows?: unknown } | null)?.rows;
  if (Array.isArray(rows)) return rows;
  throw new TypeError("fromDrizzle: execute() answered neither rows nor { rows }");
}

/**
 * Wraps a Drizzle transaction (`db.transaction(async (tx) => …)`) as the `connection` option of
 * `enqueue`, `enqueueMany` and `Soniq.enqueue`: the jobs are inserted by the transaction's own
 * connection, so they exist if and only if the transaction commits, and workers are woken at
 * commit (never before, never on rollback). Tested with the node-postgres
 * (`drizzle-orm/node-postgres`) and postgres.js (`drizzle-orm/postgres-js`) drivers; each of
 * Soniq's `$n` parameters is passed to Drizzle as one parameter (`sql.param`; an array as
 * PostgreSQL array-literal text, which every driver sends as it is). Given a database that is not
 * in a transaction, each enqueue commits on its own.
 *
 * The Soniq instance must use PostgreSQL, else enqueue throws `SoniqError` `UNSUPPORTED`.
 * Errors of the statements are Drizzle's/the driver's, unchanged; a driver whose `execute`
 * answers neither rows nor `{ rows }` makes enqueue throw a `TypeError`.
 * @param tx - The transaction.
 * @returns A connection to pass as `{ connection }`; it holds no state of its own.
 */
export function fromDrizzle(tx: DrizzleExecutor): PgQueryable {
  return {
    async query(text: string, values?: unknown[]) {
      const split = splitPositionalParameters(text);
      const chunks: SQL[] = [sql.raw(split.text[0] ?? "")];
      split.parameters.forEach((n, i) => {
        const value = values?.[n - 1] ?? null;
        const param = sql.param(Array.isArray(value) ? arrayLiteral(value) : value);
        chunks.push(sql`${param}`, sql.raw(split.text[i + 1] ?? ""));
      });
      const rows = rowsOf(await tx.execute(sql.join(chunks)));
      return { rows, rowCount: rows.length };
    },
  };
}
