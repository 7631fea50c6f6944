/**
 * Every running job's `job_timeout`, in one structure with one timer (instead of a
 * `setTimeout`/`clearTimeout` pair per job): a binary min-heap of deadlines, each entry knowing its
 * place so a finished job leaves it in O(log n). The timer is armed for the earliest deadline;
 * removing that entry does not re-arm it (the common case: a job finishing long before its
 * timeout), so when it fires with nothing due it re-arms for the then earliest deadline, and it is
 * cleared when the heap empties.
 *
 * Granularity: exact — an entry fires in the first timer callback at or after its deadline (by the
 * queue's clock), i.e. as late as one `setTimeout` would be, never earlier; entries due together
 * fire in deadline order.
 */

/** One scheduled deadline; pass it back to {@link DeadlineQueue.remove}. */
export interface DeadlineEntry {
  /** When it fires, in the clock's milliseconds. */
  readonly at: number;
  /** Heap position; -1 once removed or fired. */
  index: number;
  readonly fire: () => void;
}

/** See the module comment. */
export class DeadlineQueue {
  private readonly heap: DeadlineEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  /** @param now - the clock deadlines are stated in (milliseconds). */
  constructor(private readonly now: () => number) {}

  /** Deadlines waiting. */
  get size(): number {
    return this.heap.length;
  }

  /** Calls `fire` once at or after `at` (clock milliseconds) unless removed first. */
  add(at: number, fire: () => void): DeadlineEntry {
    const entry: DeadlineEntry = { at, fire, index: this.heap.length };
    this.heap.push(entry);
    this.up(entry.index);
    if (at < this.timerAt) this.arm(at);
    return entry;
  }

  /** Takes an entry out (idempotent; a no-op once it fired). */
  remove(entry: DeadlineEntry): void {
    const i = entry.index;
    if (i < 0) return;
    entry.index = -1;
    const last = this.heap.pop() as DeadlineEntry;
    if (last !== entry) {
      this.heap[i] = last;
      last.index = i;
      this.down(i);
      this.up(last.index);
    }
    if (this.heap.length === 0) this.disarm();
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.onTimer(), Math.max(0, at - this.now()));
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private onTimer(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    const due: DeadlineEntry[] = [];
    for (let head = this.heap[0]; head !== undefined && head.at <= now; head = this.heap[0]) {
      this.remove(head);
      due.push(head);
    }
    const next = this.heap[0];
    if (next) this.arm(next.at);
    for (const entry of due) entry.fire();
  }

  private up(i: number): void {
    const heap = this.heap;
    const entry = heap[i] as DeadlineEntry;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = heap[p] as DeadlineEntry;
      if (parent.at <= entry.at) break;
      heap[i] = parent;
      parent.index = i;
      i = p;
    }
    heap[i] = entry;
    entry.index = i;
  }

  private down(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const entry = heap[i] as DeadlineEntry;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      const right = heap[c + 1];
      if (right && right.at < (heap[c] as DeadlineEntry).at) c += 1;
      const child = heap[c] as DeadlineEntry;
      if (entry.at <= child.at) break;
      heap[i] = child;
      child.index = i;
      i = c;
    }
    heap[i] = entry;
    entry.index = i;
  }
}
