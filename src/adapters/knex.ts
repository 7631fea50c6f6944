/**
 * `soniq/knex`: transactional enqueue inside a Knex transaction on PostgreSQL
 * (docs/transactions.md#knex). Knex is an optional peer dependency of Soniq; this entry point
 * only imports its types.
 */
import type { Knex } from "knex";
import type { PgQueryable } from "../backends/contract/index.js";
import { splitPositionalParameters } from "./positional-parameters.js";

/**
 * Wraps a Knex transaction (`knex.transaction(async (trx) => …)`) as the `connection` option of
 * `enqueue`, `enqueueMany` and `Soniq.enqueue`: the jobs are inserted by the transaction's own
 * connection, so they exist if and only if the transaction commits, and workers are woken at
 * commit (never before, never on rollback).
 *
 * Soniq's statements run through `trx.raw` with Knex's `?` bindings (its `$n` parameters
 * renumbered; a literal `?` in the text is escaped), on the `pg` client (`client: "pg"`).
 * Knex applies a `postProcessResponse` hook to raw results too: one that renames columns breaks
 * enqueue; it receives `queryContext` `{ soniq: true }` for Soniq's statements, to leave them
 * alone. Given a Knex that is not in a transaction, each enqueue commits on its own.
 *
 * The Soniq instance must use PostgreSQL, else enqueue throws `SoniqError` `UNSUPPORTED`.
 * Errors of the statements are Knex's/the driver's, unchanged.
 * @param trx - The transaction (any `Knex` instance; a `Knex.Transaction` is one).
 * @returns A connection to pass as `{ connection }`; it holds no state of its own.
 */
export function fromKnex(trx: Knex): PgQueryable {
  return {
    async query(text: string, values?: unknown[]) {
      const split = splitPositionalParameters(text);
      const escaped = split.text.map((piece) => piece.replaceAll("?", "\\?"));
      const bindings = split.parameters.map((n) => values?.[n - 1] ?? null);
      const result: unknown = await trx
        .raw(escaped.join("?"), bindings as Knex.RawBinding[])
        .queryContext({ soniq: true });
      const rows = (result as { rows?: unknown } | null)?.rows;
      if (!Array.isArray(rows)) {
        throw new TypeError("fromKnex: raw() answered no { rows } (is the client `pg`?)");
      }
      return { rows, rowCount: rows.length };
    },
  };
}
