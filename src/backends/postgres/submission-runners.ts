/**
 * How the PostgreSQL submission store runs its named statements: one at a time on the pool, or
 * several in one transaction on one pooled connection (`BEGIN … COMMIT`, rolled back when the
 * work throws). Both run as in-flight calls of the connection (close() waits for them).
 */

import type { PgConnection } from "./connection.js";
import { type NamedStatement, valuesOf } from "./submission-sql.js";

/** Runs one named statement with its params → rows and the changed-row count. */
export type PgRun = <R>(
  statement: NamedStatement,
  params: Record<string, unknown>,
) => Promise<{ rows: R[]; rowCount: number }>;

/** The store's two ways of running statements. */
export interface SubmissionRunners {
  /** One statement on the pool. */
  run: PgRun;
  /** `fn`'s statements in one transaction on one connection. */
  transaction<T>(fn: (run: PgRun) => Promise<T>): Promise<T>;
}

/** The {@link SubmissionRunners} over `conn`. */
export function submissionRunners(conn: PgConnection): SubmissionRunners {
  return {
    run: (statement, params) => conn.run(statement.text, valuesOf(statement, params)),
    // The connection's own transaction (BEGIN … COMMIT, ROLLBACK on a throw, a broken
    // connection discarded), with `fn`'s statements run on its client.
    transaction: (fn) =>
      conn.transaction((client) =>
        fn(async (statement, params) => {
          const r = await client.query(statement.text, valuesOf(statement, params));
          return { rows: r.rows, rowCount: r.rowCount ?? 0 };
        }),
      ),
  };
}
