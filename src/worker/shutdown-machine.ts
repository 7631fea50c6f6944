/**
 * The worker's shutdown state machine (seed 000's diagram, DESIGN.md §2), as a small pure
 * module: no timers, no I/O; time comes from an injected clock in **milliseconds**.
 *
 *   RUNNING --stop--> DRAINING --all jobs settled--> STOPPED
 *                        |
 *                        +--shutdown_timeout elapsed--> FORCE_TIMEOUT_PATH --all released--> STOPPED
 *
 * The first stop request owns the deadline; repeats are recorded and never move it.
 */

/** Shutdown states, named as in the contract. */
export type ShutdownState = "RUNNING" | "DRAINING" | "FORCE_TIMEOUT_PATH" | "STOPPED";

/** Why the worker stopped. */
export type ExitReason = "drained" | "shutdown_timeout";

/** What {@link ShutdownMachine.requestStop} reports. */
export interface StopRequestResult {
  /** True for the request that started the drain; false for repeats (and after STOPPED). */
  first: boolean;
  /** The drain's deadline (ms since the epoch), owned by the first request. */
  deadlineAt: number;
}

export class ShutdownMachine {
  private current: ShutdownState = "RUNNING";
  private startedAt: number | undefined;
  private deadline: number | undefined;
  private owner: string | undefined;
  private forced = false;
  /** Signals (or "api") received after the first, in order. */
  readonly repeats: string[] = [];

  /**
   * @param shutdownTimeoutSeconds - `shutdown_timeout`, in seconds.
   * @param now - the clock, in milliseconds since the epoch.
   */
  constructor(
    private readonly shutdownTimeoutSeconds: number,
    private readonly now: () => number,
  ) {}

  get state(): ShutdownState {
    return this.current;
  }

  /** The signal (or "api") that started the drain. */
  get signal(): string | undefined {
    return this.owner;
  }

  /** When the drain started (ms), once it has. */
  get drainStartedAt(): number | undefined {
    return this.startedAt;
  }

  /** The drain's deadline (ms), once it has started. */
  get deadlineAt(): number | undefined {
    return this.deadline;
  }

  /** RUNNING → DRAINING on the first request; repeats are recorded and change nothing. */
  requestStop(signal: string): StopRequestResult {
    if (this.current === "RUNNING") {
      const now = this.now();
      this.current = "DRAINING";
      this.owner = signal;
      this.startedAt = now;
      this.deadline = now + this.shutdownTimeoutSeconds * 1000;
      return { first: true, deadlineAt: this.deadline };
    }
    this.repeats.push(signal);
    return { first: false, deadlineAt: this.deadline ?? this.now() };
  }

  /** Milliseconds left before the deadline (0 when past; Infinity while RUNNING). */
  timeLeftMs(): number {
    if (this.deadline === undefined) return Number.POSITIVE_INFINITY;
    return Math.max(0, this.deadline - this.now());
  }

  /**
   * DRAINING → FORCE_TIMEOUT_PATH when the deadline has passed. Returns true when this call made
   * the transition.
   */
  checkDeadline(): boolean {
    if (this.current !== "DRAINING" || this.timeLeftMs() > 0) return false;
    this.current = "FORCE_TIMEOUT_PATH";
    this.forced = true;
    return true;
  }

  /**
   * The effective deadline of a job (DESIGN.md §2 precedence): `min(job deadline, shutdown
   * deadline)`, and which of the two it is. `jobDeadlineAt` is null for a job without timeout.
   */
  effectiveDeadline(
    jobDeadlineAt: number | null,
  ): { at: number; by: "job_timeout" | "shutdown_timeout" } | null {
    const shutdown = this.deadline;
    if (jobDeadlineAt === null && shutdown === undefined) return null;
    if (shutdown === undefined) return { at: jobDeadlineAt as number, by: "job_timeout" };
    if (jobDeadlineAt === null || shutdown < jobDeadlineAt)
      return { at: shutdown, by: "shutdown_timeout" };
    return { at: jobDeadlineAt, by: "job_timeout" };
  }

  /** DRAINING or FORCE_TIMEOUT_PATH → STOPPED once every claimed job is finished or released. */
  settle(): ExitReason | undefined {
    if (this.current !== "DRAINING" && this.current !== "FORCE_TIMEOUT_PATH") return undefined;
    this.current = "STOPPED";
    return this.forced ? "shutdown_timeout" : "drained";
  }
}
