/**
 * Group commit for completions, as a service: jobs that finish while a completion write is in
 * flight are written together by the next one (one statement on PostgreSQL), so a busy worker
 * spends one round trip per batch rather than per job. Each caller awaits its own fenced result,
 * so the drain — which waits for every job's outcome write — never finishes with an
 * acknowledgement still unwritten. `stop()` flushes what is queued and waits for the writes in
 * flight (bounded); from the moment a stop is asked, and before any start, new completions are
 * refused at once with `SoniqError("CLOSED")`.
 *
 * A completion may carry a bound (`timeoutMs`): one timer per batch write, set for the earliest
 * bound among its completions, rejects them all with an {@link OperationTimeoutError} when the
 * database has not answered by then, and stops counting that write against `maxInFlight` (what it
 * does later is ignored; the caller's retry is fenced like any other write). No timer and no
 * `Promise.race` per completion.
 */
import type { Backend, CompletionItem } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import { BaseService } from "../lifecycle/service.js";
import type { Logger } from "../observability/logger.js";
import { OperationTimeoutError } from "./with-timeout.js";

interface Pending {
  item: CompletionItem;
  /** Give-up time (`performance.now()` ms), or +Infinity. */
  deadline: number;
  resolve: (changed: boolean) => void;
  reject: (err: unknown) => void;
}

/** Options of {@link CompletionBatcher}. */
export interface CompletionBatcherOptions {
  backend: Backend;
  /** Result retention, in seconds. */
  retentionSeconds: number;
  logger: Logger;
  /** Most completions in one write. Default 500. */
  maxBatch?: number;
  /** Writes in flight at once; more completions wait and join the next one. Default 2. */
  maxInFlight?: number;
  /** Bound of `stop()` in milliseconds. Default the service default. */
  stopBoundMs?: number;
}

/** See the module comment. */
export class CompletionBatcher extends BaseService {
  private readonly backend: Backend;
  private readonly retentionSeconds: number;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private pending: Pending[] = [];
  private readonly writes = new Set<Promise<void>>();
  private scheduled = false;

  constructor(options: CompletionBatcherOptions) {
    super({ name: "completion-batcher", logger: options.logger, stopBoundMs: options.stopBoundMs });
    this.backend = options.backend;
    this.retentionSeconds = options.retentionSeconds;
    this.maxBatch = options.maxBatch ?? 500;
    this.maxInFlight = options.maxInFlight ?? 2;
  }

  /**
   * Completes one job (fenced). Resolves with whether its row changed.
   * @param timeoutMs - longest wait for the answer, in milliseconds from now (default: none).
   * @throws SoniqError `CLOSED` (as a rejection, at once) when the batcher is not running;
   *   {@link OperationTimeoutError} when `timeoutMs` passed first; the backend's errors for the
   *   write that carried this completion.
   */
  complete(item: CompletionItem, timeoutMs?: number): Promise<boolean> {
    if (this.stopRequested) {
      return Promise.reject(
        new SoniqError("CLOSED", "the completion batcher is stopped; completion not written"),
      );
    }
    return new Promise((resolve, reject) => {
      const deadline =
        timeoutMs === undefined ? Number.POSITIVE_INFINITY : performance.now() + timeoutMs;
      this.pending.push({ item, deadline, resolve, reject });
      this.schedule();
    });
  }

  /** Waits for the stop, then writes everything still queued. */
  protected async run(signal: AbortSignal): Promise<void> {
    if (!signal.aborted) {
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
    }
    while (this.pending.length > 0 || this.writes.size > 0) {
      this.flush();
      await Promise.race(this.writes);
    }
  }

  private schedule(): void {
    if (this.scheduled || this.pending.length === 0 || this.writes.size >= this.maxInFlight) return;
    this.scheduled = true;
    // Let every job finishing in this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.pending.length > 0 && this.writes.size < this.maxInFlight) {
      const batch = this.pending.splice(0, this.maxBatch);
      let deadline = Number.POSITIVE_INFINITY;
      for (const p of batch) if (p.deadline < deadline) deadline = p.deadline;
      let over = false;
      let timer: NodeJS.Timeout | undefined;
      const write: Promise<void> = this.backend
        .jobCompleteMany({
          items: batch.map((p) => p.item),
          resultRetentionSeconds: this.retentionSeconds,
        })
        .then(
          (changed) => {
            if (over) return;
            batch.forEach((p, i) => {
              p.resolve(changed[i] === true);
            });
          },
          (err: unknown) => {
            if (over) return;
            for (const p of batch) p.reject(err);
          },
        )
        .finally(() => {
          clearTimeout(timer);
          if (this.writes.delete(write)) this.schedule();
        });
      this.writes.add(write);
      if (deadline !== Number.POSITIVE_INFINITY) {
        const ms = Math.max(0, deadline - performance.now());
        timer = setTimeout(() => {
          over = true;
          const err = new OperationTimeoutError("completion", Math.round(ms));
          for (const p of batch) p.reject(err);
          // No longer waited for: the next completions need not queue behind it.
          if (this.writes.delete(write)) this.schedule();
        }, ms);
      }
    }
  }
}
