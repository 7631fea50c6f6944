/**
 * Live bulk operations: a bulk action over a selection or "everything matching" runs in the
 * background of the dashboard's process in bounded batches (the admin API's `runBulk`), and its
 * running totals are read with `GET /api/operations/:id` while it runs. The start answers once the
 * matching rows are counted, so `expectedCount` still refuses (409) before anything changes.
 * Operations live in the memory of one dashboard handler (the process that serves the page); the
 * newest {@link KEPT_OPERATIONS} finished ones are kept to be read back.
 */
import { randomUUID } from "node:crypto";
import { setImmediate as yieldToIo } from "node:timers/promises";
import type { BulkResult } from "../admin/bulk.js";
import type { Logger } from "../observability/logger.js";

/** Finished operations kept for reading back (older ones are forgotten first). */
export const KEPT_OPERATIONS = 100;

/** Rows per batch of a live bulk operation (one progress update per batch). */
export const OPERATION_BATCH_SIZE = 200;

/**
 * Options for a bulk action answered in one response (`POST api/jobs/bulk`, `api/dead-letter/bulk`):
 * the same batches as a live operation, yielding to the HTTP server between them, so a bulk over
 * many SQLite rows (synchronous calls) does not stop the process from answering meanwhile.
 */
export const YIELDING_BULK = {
  batchSize: OPERATION_BATCH_SIZE,
  onProgress: async (): Promise<void> => {
    await yieldToIo();
  },
} as const;

/** What `GET /api/operations/:id` returns. */
export interface OperationView {
  id: string;
  /** `jobs.bulk.cancel`, `deadLetters.bulk.replay`, … (the audited action). */
  action: string;
  /** Who started it. */
  user: string;
  /** ISO-8601. */
  startedAt: string;
  /** ISO-8601, or null while it runs. */
  finishedAt: string | null;
  /** Rows matched when it began (fixed once counted). */
  matched: number;
  /** Rows changed so far. */
  done: number;
  /** Rows left alone so far (already in a state the action does not apply to, or gone). */
  skipped: number;
  finished: boolean;
  /** Why it stopped early (a database error), or null. */
  error: { code: string; message: string } | null;
}

/** Runs a bulk action with `onProgress` wired in; resolves with its final totals. */
export type BulkRun = (
  onProgress: (progress: Readonly<BulkResult>) => Promise<void>,
) => Promise<BulkResult>;

/** The operations of one dashboard handler. */
export class BulkOperations {
  private readonly byId = new Map<string, OperationView>();

  /** @param logger - where an operation that stops on an error is logged. */
  constructor(private readonly logger: Logger) {}

  /**
   * Starts `run`; resolves with the operation once its rows are counted (or it ended), rejects
   * with the action's error when it fails before that (bad filter, `COUNT_MISMATCH`).
   */
  start(action: string, user: string, run: BulkRun): Promise<OperationView> {
    const op: OperationView = {
      id: randomUUID(),
      action,
      user,
      startedAt: new Date().toISOString(),
      finishedAt: null,
      matched: 0,
      done: 0,
      skipped: 0,
      finished: false,
      error: null,
    };
    return new Promise<OperationView>((resolve, reject) => {
      let counted = false;
      const onProgress = async (progress: Readonly<BulkResult>) => {
        op.matched = progress.matched;
        op.done = progress.done;
        op.skipped = progress.skipped;
        if (!counted) {
          counted = true;
          this.remember(op);
          resolve({ ...op });
        }
        // Let the HTTP server answer progress reads between batches (SQLite calls are synchronous).
        await yieldToIo();
      };
      run(onProgress).then(
        (result) => {
          Object.assign(op, {
            matched: result.matched,
            done: result.done,
            skipped: result.skipped,
            finished: true,
            finishedAt: new Date().toISOString(),
          });
          if (!counted) {
            counted = true;
            this.remember(op);
            resolve({ ...op });
          }
        },
        (err: unknown) => {
          if (!counted) {
            reject(err);
            return;
          }
          const code = (err as { code?: unknown } | null)?.code;
          op.error = {
            code: typeof code === "string" ? code : "INTERNAL",
            message: err instanceof Error ? err.message : String(err),
          };
          op.finished = true;
          op.finishedAt = new Date().toISOString();
          this.logger.error(
            { err, operation: op.id, action: op.action, done: op.done, matched: op.matched },
            "dashboard bulk operation stopped on an error",
          );
        },
      );
    });
  }

  /** The operation's current totals, or undefined. */
  get(id: string): OperationView | undefined {
    const op = this.byId.get(id);
    return op ? { ...op } : undefined;
  }

  private remember(op: OperationView): void {
    this.byId.set(op.id, op);
    if (this.byId.size <= KEPT_OPERATIONS) return;
    for (const [id, old] of this.byId) {
      if (this.byId.size <= KEPT_OPERATIONS) break;
      if (old.finished) this.byId.delete(id);
    }
  }
}
