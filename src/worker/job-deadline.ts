/**
 * A running job's two deadlines, as the {@link ShutdownMachine} states them (the precedence rule
 * of docs/shutdown.md): the executor schedules its `job_timeout` — in the machine's one
 * {@link DeadlineQueue} (one timer for all running jobs, exact: never before the deadline) — only
 * while the machine's
 * `effectiveDeadline` says `job_timeout` comes first, and re-reads it at every transition; the
 * shutdown deadline reaches it only as the machine's move to FORCE_TIMEOUT_PATH, never from a timer
 * of its own. So a job never times out after the machine decided shutdown comes first, and is never
 * forced before the machine says so.
 */
import { type DeadlineEntry, DeadlineQueue } from "./deadline-queue.js";
import type { ShutdownMachine } from "./shutdown-machine.js";

/**
 * The running jobs' watches of one shutdown machine: its {@link DeadlineQueue} (their
 * `job_timeout`s, on its clock) and a linked list of the open watches, told of every transition
 * through one machine listener (subscribed with the first watch, so after the drain's and the
 * runtime's own listeners). A watch joins and leaves in O(1) with no hashing — a listener set per
 * job churned a hash table at every job start and end.
 */
class MachineWatches {
  readonly queue: DeadlineQueue;
  first: DeadlineWatch | undefined;
  last: DeadlineWatch | undefined;

  constructor(machine: ShutdownMachine) {
    this.queue = new DeadlineQueue(() => machine.now());
    machine.subscribe(() => {
      // A snapshot, as the machine's own listener list: a watch that ends while the others are
      // told (or one that begins) does not change who is told of this transition.
      const open: DeadlineWatch[] = [];
      for (let w = this.first; w !== undefined; w = w.next) open.push(w);
      for (const w of open) w.onState();
    });
  }

  add(watch: DeadlineWatch): void {
    watch.prev = this.last;
    watch.next = undefined;
    if (this.last) this.last.next = watch;
    else this.first = watch;
    this.last = watch;
    watch.linked = true;
  }

  remove(watch: DeadlineWatch): void {
    if (!watch.linked) return;
    watch.linked = false;
    if (watch.prev) watch.prev.next = watch.next;
    else this.first = watch.next;
    if (watch.next) watch.next.prev = watch.prev;
    else this.last = watch.prev;
    watch.prev = undefined;
    watch.next = undefined;
  }
}

const registries = new WeakMap<ShutdownMachine, MachineWatches>();

function watchesOf(machine: ShutdownMachine): MachineWatches {
  let watches = registries.get(machine);
  if (!watches) {
    watches = new MachineWatches(machine);
    registries.set(machine, watches);
  }
  return watches;
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
 * of a set of closures per job). `end` is its only per-job function.
 */
class DeadlineWatch {
  /** Its place in {@link MachineWatches}' list (managed there). */
  prev: DeadlineWatch | undefined;
  next: DeadlineWatch | undefined;
  linked = false;
  private timer: DeadlineEntry | undefined;
  private ended = false;
  private readonly watches: MachineWatches;
  /** Stops the watch (idempotent): what {@link watchJobDeadlines} returns. */
  readonly end = (): void => {
    this.ended = true;
    if (this.timer) this.watches.queue.remove(this.timer);
    this.watches.remove(this);
  };

  constructor(
    private readonly machine: ShutdownMachine,
    private readonly jobDeadlineAt: number | null,
    private readonly handlers: JobDeadlineHandlers,
  ) {
    this.watches = watchesOf(machine);
  }

  /** Starts watching (or forces at once when the machine is already past FORCE_TIMEOUT_PATH). */
  start(): void {
    if (this.machine.forcedAt !== undefined) {
      this.force();
      return;
    }
    this.watches.add(this);
    this.arm();
  }

  /** A transition of the machine (told by {@link MachineWatches}). */
  onState(): void {
    if (this.ended) return;
    // Any state past the FORCE_TIMEOUT_PATH instant means forced; DRAINING may move the deadline.
    if (this.machine.forcedAt !== undefined) this.force();
    else this.arm();
  }

  private arm(): void {
    const { queue } = this.watches;
    if (this.timer) queue.remove(this.timer);
    this.timer = undefined;
    const deadline = this.machine.effectiveDeadline(this.jobDeadlineAt);
    if (deadline?.by !== "job_timeout") return;
    this.timer = queue.add(deadline.at, () => this.fire());
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
