/**
 * The worker's shutdown state machine (the diagram of docs/shutdown.md, "The states"), as a small
 * pure module: no timers, no I/O; time comes from an injected clock in **milliseconds**.
 *
 *   RUNNING --stop--> DRAINING --all jobs settled--> STOPPED
 *                        |
 *                        +--shutdown_timeout elapsed--> FORCE_TIMEOUT_PATH
 *                                                         |-- async branch: abort, settle, NACK --> STOPPED
 *                                                         +-- sync branch --> WAIT_FOR_THREAD (flat grace
 *                                                               = sync_handler_grace_seconds from the
 *                                                               FORCE_TIMEOUT_PATH instant; then keep waiting,
 *                                                               without bound) --threads returned--> STOPPED
 *
 * The first stop request owns the deadline; repeats are recorded and never move it.
 *
 * It is the one source of truth for every shutdown instant: the drain arms its timers from
 * {@link ShutdownMachine.timeLeftMs} and {@link ShutdownMachine.graceEndsAt}, and the executors
 * take a job's deadline from {@link ShutdownMachine.effectiveDeadline} and learn of
 * FORCE_TIMEOUT_PATH through {@link ShutdownMachine.subscribe}, never from a timer of their own.
 */

/** Shutdown states, named as in the contract. */
export type ShutdownState =
  | "RUNNING"
  | "DRAINING"
  | "FORCE_TIMEOUT_PATH"
  | "WAIT_FOR_THREAD"
  | "STOPPED";

/** Why the worker stopped. */
export type ExitReason = "drained" | "shutdown_timeout";

/** What {@link ShutdownMachine.requestStop} reports. */
export interface StopRequestResult {
  /** True for the request that started the drain; false for repeats (and after STOPPED). */
  first: boolean;
  /** The drain's deadline (ms since the epoch), owned by the first request. */
  deadlineAt: number;
}

/** Called after every state change, with the new state. */
export type ShutdownListener = (state: ShutdownState) => void;

/** See the module comment. */
export class ShutdownMachine {
  private current: ShutdownState = "RUNNING";
  private startedAt: number | undefined;
  private deadline: number | undefined;
  private owner: string | undefined;
  private forced = false;
  private forcedInstant: number | undefined;
  private readonly listeners = new Set<ShutdownListener>();
  /** Signals (or "api") received after the first, in order. */
  readonly repeats: string[] = [];

  /**
   * @param shutdownTimeoutSeconds - `shutdown_timeout`, in seconds.
   * @param now - the clock, in milliseconds since the epoch.
   * @param syncGraceSeconds - `sync_handler_grace_seconds`, in seconds (flat, from the
   *   FORCE_TIMEOUT_PATH instant; never `min(remaining, grace)`).
   */
  constructor(
    private readonly shutdownTimeoutSeconds: number,
    private readonly clock: () => number,
    private readonly syncGraceSeconds = 0,
  ) {}

  /** The machine's clock, in milliseconds since the epoch: the time every deadline is read in. */
  now(): number {
    return this.clock();
  }

  /**
   * Calls `listener` after every state change (synchronously, in subscription order). A listener
   * must not throw. Returns the unsubscribe function.
   */
  subscribe(listener: ShutdownListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private enter(state: ShutdownState): void {
    this.current = state;
    for (const listener of [...this.listeners]) listener(state);
  }

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
      this.owner = signal;
      this.startedAt = now;
      this.deadline = now + this.shutdownTimeoutSeconds * 1000;
      this.enter("DRAINING");
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
    this.forced = true;
    this.forcedInstant = this.now();
    this.enter("FORCE_TIMEOUT_PATH");
    return true;
  }

  /**
   * FORCE_TIMEOUT_PATH → WAIT_FOR_THREAD when sync handlers are still running. Returns the end of
   * the flat grace budget (ms): FORCE_TIMEOUT_PATH instant + `sync_handler_grace_seconds`.
   */
  waitForThreads(): { graceEndsAt: number } | undefined {
    const forcedAt = this.forcedInstant;
    if (this.current !== "FORCE_TIMEOUT_PATH" || forcedAt === undefined) return undefined;
    this.enter("WAIT_FOR_THREAD");
    return { graceEndsAt: forcedAt + this.syncGraceSeconds * 1000 };
  }

  /** The FORCE_TIMEOUT_PATH instant (ms), once it was reached. */
  get forcedAt(): number | undefined {
    return this.forcedInstant;
  }

  /** End of the sync grace budget (ms), once FORCE_TIMEOUT_PATH was reached. */
  get graceEndsAt(): number | undefined {
    const forcedAt = this.forcedInstant;
    return forcedAt === undefined ? undefined : forcedAt + this.syncGraceSeconds * 1000;
  }

  /** True in WAIT_FOR_THREAD once the flat grace budget has run out (the wait goes on). */
  graceExpired(): boolean {
    const end = this.graceEndsAt;
    return this.current === "WAIT_FOR_THREAD" && end !== undefined && this.now() >= end;
  }

  /**
   * The effective deadline of a job (the precedence rule of docs/shutdown.md): `min(job deadline,
   * shutdown deadline)`, and which of the two it is. `jobDeadlineAt` is null for a job without
   * timeout.
   */
  effectiveDeadline(
    jobDeadlineAt: number | null,
  ): { at: number; by: "job_timeout" | "shutdown_timeout" } | null {
    const shutdown = this.deadline;
    if (jobDeadlineAt === null && shutdown === undefined) return null;
    if (shutdown === undefined) {
      return jobDeadlineAt === null ? null : { at: jobDeadlineAt, by: "job_timeout" };
    }
    if (jobDeadlineAt === null || shutdown < jobDeadlineAt)
      return { at: shutdown, by: "shutdown_timeout" };
    return { at: jobDeadlineAt, by: "job_timeout" };
  }

  /**
   * DRAINING, FORCE_TIMEOUT_PATH or WAIT_FOR_THREAD → STOPPED once every claimed job is finished
   * or released and every sync thread has returned.
   */
  settle(): ExitReason | undefined {
    if (this.current === "RUNNING" || this.current === "STOPPED") return undefined;
    this.enter("STOPPED");
    return this.forced ? "shutdown_timeout" : "drained";
  }
}
