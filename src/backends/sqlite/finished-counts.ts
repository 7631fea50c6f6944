/**
 * The job counters of the SQLite backend (docs/backends.md, "Counting without scanning"): a
 * transaction that moves jobs into `soniq_finished_jobs` or removes them tallies them here per
 * queue and kind, then writes one counter update per queue and kind ({@link SQL.countFinished})
 * before it commits, so the counts change with the rows, atomically. A failed attempt's requeue
 * and a move to the dead-letter queue count themselves the same way ({@link countOutcome}).
 */
import type { SqliteSession } from "./connection.js";

/**
 * A counter kind: jobs that finished as `done`/`cancelled`, such jobs that left the store
 * (`_gone`), failed attempts requeued for a retry (`failed`) and jobs moved to the dead-letter
 * queue (`dead`).
 */
export type CountKind = "done" | "cancelled" | "done_gone" | "cancelled_gone" | "failed" | "dead";

/** What a counted row carries (milliseconds since the epoch for the instants). */
export interface CountedRow {
  queue: string;
  started_at: number | null;
  scheduled_at: number;
}

/** One transaction's counts, written by {@link FinishedTally.write}. */
export class FinishedTally {
  private readonly cells = new Map<
    string,
    { queue: string; kind: CountKind; n: number; waitS: number }
  >();

  /** Counts `row` as `kind`; a `done` row adds its wait from due to start. */
  add(row: CountedRow, kind: CountKind): void {
    const key = `${kind}\u0000${row.queue}`;
    let cell = this.cells.get(key);
    if (cell === undefined) {
      cell = { queue: row.queue, kind, n: 0, waitS: 0 };
      this.cells.set(key, cell);
    }
    cell.n += 1;
    if (kind === "done" && row.started_at !== null) {
      cell.waitS += (row.started_at - row.scheduled_at) / 1000;
    }
  }

  /** Writes the counts (inside the caller's transaction) and forgets them. */
  write(s: SqliteSession): void {
    if (this.cells.size === 0) return;
    const count = s.statement("countFinished");
    for (const cell of this.cells.values()) {
      count.run({ queue: cell.queue, kind: cell.kind, n: cell.n, waitS: cell.waitS });
    }
    this.cells.clear();
  }
}

/** Counts one row as `kind` at once (a transaction that moves a single job). */
export function countOne(s: SqliteSession, row: CountedRow, kind: CountKind): void {
  const tally = new FinishedTally();
  tally.add(row, kind);
  tally.write(s);
}

/**
 * Counts one job of `queue` as `kind` (`failed` or `dead`: no wait is added), inside the caller's
 * transaction.
 */
export function countOutcome(s: SqliteSession, queue: string, kind: "failed" | "dead"): void {
  s.statement("countFinished").run({ queue, kind, n: 1, waitS: 0 });
}
