/**
 * The wake-up at the next rate-limit window (docs/flow-control.md, "Rate limits"): after a claim
 * that left rate-limited jobs queued because their keys' windows were full, the backend asks the
 * database when the earliest of those windows frees a start and wakes this process's claimers
 * then (`wake("*")`), instead of their waiting for the next poll. One timer per store, the
 * earliest asked for; unref'd, so it never keeps a process alive.
 */

/** The longest wait one timer is set for, in ms (a longer one is left to the polls). */
const MAX_WAIT_MS = 60 * 60_000;

/** See the module comment. */
export class RateWindowWake {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private dueAt = Number.POSITIVE_INFINITY;
  private closed = false;

  /** @param wake - wakes this process's claimers of a queue (`"*"`: every queue). */
  constructor(private readonly wake: (queue: string) => void) {}

  /**
   * Wakes the claimers in `ms` milliseconds (at least 1), unless a wake-up is already set for
   * that time or earlier. Ignored after {@link close}, or when not a finite number of ms up to an
   * hour.
   */
  in(ms: number): void {
    if (this.closed || !Number.isFinite(ms) || ms > MAX_WAIT_MS) return;
    const wait = Math.max(1, Math.ceil(ms));
    const at = Date.now() + wait;
    if (at >= this.dueAt) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.dueAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.dueAt = Number.POSITIVE_INFINITY;
      this.wake("*");
    }, wait);
    this.timer.unref?.();
  }

  /** Cancels the pending wake-up and ignores later ones (the store is closing). */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Whether a job's `meta` JSON text (or null) carries a rate limit. Never throws. */
export function hasRateLimit(meta: string | null | undefined): boolean {
  if (typeof meta !== "string" || !meta.includes('"rate"')) return false;
  try {
    const parsed = JSON.parse(meta) as { rate?: unknown } | null;
    return typeof parsed === "object" && parsed !== null && parsed.rate != null;
  } catch {
    return false;
  }
}
