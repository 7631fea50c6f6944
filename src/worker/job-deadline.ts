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
  const queue = queueOf(machine);
  let timer: DeadlineEntry | undefined;
  let ended = false;
  let unsubscribe: () => void = () => undefined;
  const end = () => {
    ended = true;
    if (timer) queue.remove(timer);
    unsubscribe();
  };
  const arm = () => {
    if (timer) queue.remove(timer);
    timer = undefined;
    const deadline = machine.effectiveDeadline(jobDeadlineAt);
    if (deadline?.by !== "job_timeout") return;
    timer = queue.add(deadline.at, fire);
  };
  const fire = () => {
    const deadline = machine.effectiveDeadline(jobDeadlineAt);
    if (ended || deadline?.by !== "job_timeout") return;
    if (machine.now() < deadline.at) return arm();
    end();
    handlers.onJobTimeout();
  };
  const force = () => {
    if (ended) return;
    end();
    handlers.onForce();
  };
  if (machine.forcedAt !== undefined) {
    force();
    return end;
  }
  unsubscribe = machine.subscribe(() => {
    // Any state past the FORCE_TIMEOUT_PATH instant means forced; DRAINING may move the deadline.
    if (machine.forcedAt !== undefined) force();
    else arm();
  });
  arm();
  return end;
}
