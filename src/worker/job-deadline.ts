/**
 * A running job's two deadlines, as the {@link ShutdownMachine} states them (DESIGN.md §2
 * precedence): the executor schedules its `job_timeout` — in the machine's one
 * {@link DeadlineQueue} (one timer for all running jobs, exact: never before the deadline) — only
 * while the machine's
 * `effectiveDeadline` says `job_timeout` comes first, and re-reads it at every transition; the
 * shutdown deadline reaches it only as the machine's move to FORCE_TIMEOUT_PATH, never from a timer
 * of its own. So a job never times out after the machine decided shutdown comes first, and is never
 * forced before the machine says so.
 */
import { type DeadlineEntry, DeadlineQueue } from "./deadline-queue.js";
import type { ShutdownMachine } from "./shutdown-machine.js";

/** One deadline queue per shutdown machine (its jobs' `job_timeout`s, on its clock). */
const queues = new WeakMap<ShutdownMachine, DeadlineQueue>();

function queueOf(machine: ShutdownMachine): DeadlineQueue {
  let queue = queues.get(machine);
  if (!queue) {
    queue = new DeadlineQueue(() => machine.now());
    queues.set(machine, queue);
  }
  return queue;
}

/** What a watched job does when one of its deadlines fires (each at most once). */
export interface JobDeadlineHandlers {
  /** `job_timeout` came first: the run ends as a timeout (an attempt counted). */
  onJobTimeout(): void;
  /** The machine reached FORCE_TIMEOUT_PATH (or had already when the watch began). */
  onForce(): void;
}

/**
 * One job's watch (a class: one per running job, so its reactions live on the prototype instead
 * of a set of closures per job). `end` and the state listener are its only per-job functions.
 */
class DeadlineWatch {
  private timer: DeadlineEntry | undefined;
  private ended = false;
  private readonly queue: DeadlineQueue;
  /** Stops the watch (idempotent): what {@link watchJobDeadlines} returns. */
  readonly end = (): void => {
    this.ended = true;
    if (this.timer) this.queue.remove(this.timer);
    this.machine.unsubscribe(this.onState);
  };
  /** The machine's state listener. */
  private readonly onState = (): void => {
    // Any state past the FORCE_TIMEOUT_PATH instant means forced; DRAINING may move the deadline.
    if (this.machine.forcedAt !== undefined) this.force();
    else this.arm();
  };

  constructor(
    private readonly machine: ShutdownMachine,
    private readonly jobDeadlineAt: number | null,
    private readonly handlers: JobDeadlineHandlers,
  ) {
    this.queue = queueOf(machine);
  }

  /** Starts watching (or forces at once when the machine is already past FORCE_TIMEOUT_PATH). */
  start(): void {
    if (this.machine.forcedAt !== undefined) {
      this.force();
      return;
    }
    this.machine.subscribe(this.onState);
    this.arm();
  }

  private arm(): void {
    if (this.timer) this.queue.remove(this.timer);
    this.timer = undefined;
    const deadline = this.machine.effectiveDeadline(this.jobDeadlineAt);
    if (deadline?.by !== "job_timeout") return;
    this.timer = this.queue.add(deadline.at, () => this.fire());
  }

  private fire(): void {
    const deadline = this.machine.effectiveDeadline(this.jobDeadlineAt);
    if (this.ended || deadline?.by !== "job_timeout") return;
    if (this.machine.now() < deadline.at) {
      this.arm();
      return;
    }
    this.end();
    this.handlers.onJobTimeout();
  }

  private force(): void {
    if (this.ended) return;
    this.end();
    this.handlers.onForce();
  }
}

/**
 * Watches one job's deadlines from now on.
 * @param timeoutSeconds - the job's `job_timeout`, in seconds; 0 means none.
 * @returns Stops the watch (idempotent); call it once the run has ended.
 */
export function watchJobDeadlines(
  machine: ShutdownMachine,
  timeoutSeconds: number,
  handlers: JobDeadlineHandlers,
): () => void {
  const jobDeadlineAt = timeoutSeconds > 0 ? machine.now() + timeoutSeconds * 1000 : null;
  const watch = new DeadlineWatch(machine, jobDeadlineAt, handlers);
  watch.start();
  return watch.end;
}
