/**
 * Group commit for completions, as a service: jobs that finish while a completion write is in
 * flight are written together by the next one (one statement on PostgreSQL), so a busy worker
 * spends one round trip per batch rather than per job. Each caller awaits its own fenced result,
 * so the drain — which waits for every job's outcome write — never finishes with an
 * acknowledgement still unwritten. `stop()` flushes what is queued and waits for the writes in
 * flight (bounded); from the moment a stop is asked, and before any start, new completions are
 * refused at once with `SoniqError("CLOSED")`.
 */
import type { Backend, CompletionItem } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import { BaseService } from "../lifecycle/service.js";
import type { Logger } from "../observability/logger.js";

interface Pending {
  item: CompletionItem;
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
   * @throws SoniqError `CLOSED` (as a rejection, at once) when the batcher is not running; the
   *   backend's errors for the write that carried this completion.
   */
  complete(item: CompletionItem): Promise<boolean> {
    if (this.stopRequested) {
      return Promise.reject(
        new SoniqError("CLOSED", "the completion batcher is stopped; completion not written"),
      );
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
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
      const write: Promise<void> = this.backend
        .jobCompleteMany({
          items: batch.map((p) => p.item),
          resultRetentionSeconds: this.retentionSeconds,
        })
        .then(
          (changed) => {
            batch.forEach((p, i) => {
              p.resolve(changed[i] === true);
            });
          },
          (err: unknown) => {
            for (const p of batch) p.reject(err);
          },
        )
        .finally(() => {
          this.writes.delete(write);
          this.schedule();
        });
      this.writes.add(write);
    }
  }
}
