/**
 * Group commit for completions: jobs that finish while a completion write is in flight are
 * written together by the next one (one statement on PostgreSQL), so a busy worker spends one
 * round trip per batch rather than per job. Each caller awaits its own fenced result, so the
 * drain — which waits for every job's outcome write — never finishes with an acknowledgement
 * still unwritten.
 */
import type { Backend, CompletionItem } from "../backends/backend.js";

interface Pending {
  item: CompletionItem;
  resolve: (changed: boolean) => void;
  reject: (err: unknown) => void;
}

export class CompletionBatcher {
  private pending: Pending[] = [];
  private writing = 0;
  private scheduled = false;

  /**
   * @param retentionSeconds - result retention, seconds.
   * @param maxBatch - most completions in one write.
   * @param maxInFlight - writes in flight at once; more completions wait and join the next one.
   */
  constructor(
    private readonly backend: Backend,
    private readonly retentionSeconds: number,
    private readonly maxBatch = 500,
    private readonly maxInFlight = 2,
  ) {}

  /** Completes one job (fenced). Resolves with whether its row changed. */
  complete(item: CompletionItem): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.pending.length === 0 || this.writing >= this.maxInFlight) return;
    this.scheduled = true;
    // Let every job finishing in this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.pending.length > 0 && this.writing < this.maxInFlight) {
      const batch = this.pending.splice(0, this.maxBatch);
      this.writing += 1;
      this.backend
        .completeMany(
          batch.map((p) => p.item),
          this.retentionSeconds,
        )
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
          this.writing -= 1;
          this.schedule();
        });
    }
  }
}
