/**
 * Crash isolation of a worker's job starts (docs/reliability.md, "Interruptions are earned"): a job
 * with a crash history runs alone — it starts once no other job of this worker is running, and no
 * other job starts until it has finished — so when it kills its process again, it is the only job
 * that was running there, and the only one a recovery charges. Every other job shares the worker as
 * usual. A reader–writer lock in FIFO order (shared: ordinary jobs; exclusive: jobs with a crash
 * history), so neither kind waits forever behind the other.
 */

/** Gives a held start back. Idempotent. */
export type StartRelease = () => void;

interface Waiter {
  exclusive: boolean;
  grant: (release: StartRelease) => void;
}

/** See the module comment. */
export class StartIsolation {
  private shared = 0;
  private exclusive = false;
  private readonly queue: Waiter[] = [];

  /** Jobs holding a start now (running). */
  get running(): number {
    return this.shared + (this.exclusive ? 1 : 0);
  }

  /**
   * A shared start at once, when one is free now (nothing exclusive holds or waits): the common
   * case, with no promise and no await. Undefined otherwise (then {@link acquire}).
   */
  tryShared(): StartRelease | undefined {
    if (this.exclusive || this.queue.length > 0) return undefined;
    this.shared += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.shared -= 1;
      this.pump();
    };
  }

  /**
   * Waits for a start: shared for an ordinary job, exclusive for a job with a crash history.
   * @param signal - aborting it gives up the wait (the job is then not started).
   * @returns The release, to call once the job's run has ended.
   * @throws the signal's reason when it aborts first.
   */
  acquire(exclusive: boolean, signal?: AbortSignal): Promise<StartRelease> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<StartRelease>((resolve, reject) => {
      const waiter: Waiter = { exclusive, grant: resolve };
      this.queue.push(waiter);
      const onAbort = () => {
        const at = this.queue.indexOf(waiter);
        if (at < 0) return;
        this.queue.splice(at, 1);
        reject(signal?.reason);
        this.pump();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      waiter.grant = (release) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(release);
      };
      this.pump();
    });
  }

  /** Grants waiters from the head of the queue while they may start. */
  private pump(): void {
    for (;;) {
      const head = this.queue[0];
      if (!head || this.exclusive) return;
      if (head.exclusive && this.shared > 0) return;
      this.queue.shift();
      let released = false;
      if (head.exclusive) this.exclusive = true;
      else this.shared += 1;
      head.grant(() => {
        if (released) return;
        released = true;
        if (head.exclusive) this.exclusive = false;
        else this.shared -= 1;
        this.pump();
      });
    }
  }
}
