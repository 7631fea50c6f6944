/**
 * The drain (docs/shutdown.md, "The states"), driven by the {@link ShutdownMachine}:
 * at its start no new claims, heartbeats report `draining`, maintenance stops; one timer, armed
 * from the machine's deadline, moves the machine to FORCE_TIMEOUT_PATH (the executors learn of it
 * from the machine and abort/NACK async jobs, raise sync threads' stop flags); with threads still
 * running the machine goes to WAIT_FOR_THREAD, whose grace end is the machine's; once every claimed
 * job is settled the machine goes to STOPPED, the worker's services stop and its row is marked
 * stopped, and the exit reason and code are decided.
 */

import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import type { Logger } from "../observability/logger.js";
import type { InFlightTable } from "./in-flight.js";
import type { ExitReason, ShutdownMachine } from "./shutdown-machine.js";
import type { WorkerThreads } from "./worker-threads.js";

/** How a worker ended. */
export interface WorkerExit {
  /**
   * `drained`: every job finished; `shutdown_timeout`: the deadline path was taken;
   * `record_failed`: an outcome could not be written; `start_failed`: start() threw.
   */
  reason: ExitReason | "record_failed" | "start_failed";
  /** The CLI's exit code: 0 drained, 1 deadline path, 2 start-up failed, 3 outcome not recorded. */
  exitCode: 0 | 1 | 2 | 3;
  /** Jobs NACK'd back to `queued` at the deadline. */
  released: string[];
}

/** What the drain drives. */
export interface DrainOptions {
  machine: ShutdownMachine;
  workerId: string;
  logger: Logger;
  events: EventBus<SoniqEventMap>;
  table: InFlightTable;
  threads: WorkerThreads;
  /** At the drain's start: stop claiming (resolves once the claim loop has ended, bounded). */
  stopClaiming(): Promise<void>;
  /** At FORCE_TIMEOUT_PATH: abandon a claim still waiting for the database (see ClaimLoop). */
  abandonClaim(): void;
  /** At the drain's start, after the claim loop was told: report `draining`, stop maintenance. */
  onDrainStart(): void;
  /**
   * Once every job is settled: stop the services and mark the worker row stopped, counting its
   * exit reason (`soniq_worker_exits`). Never throws.
   */
  closeDown(exitReason: WorkerExit["reason"]): Promise<void>;
  /** What the outcome recorder knows at the end. */
  outcomes: { readonly released: readonly string[]; readonly failures: number };
}

/** See the module comment. */
export class Drain {
  private begun: Promise<WorkerExit> | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: DrainOptions) {
    // Subscribed before any job runs, so the drain hears of FORCE_TIMEOUT_PATH before executors.
    options.machine.subscribe((state) => {
      if (state === "FORCE_TIMEOUT_PATH") this.onForced();
    });
  }

  /**
   * Begins the drain (idempotent; the machine must already be past RUNNING).
   * @returns How the worker ended, once STOPPED.
   */
  begin(): Promise<WorkerExit> {
    this.begun ??= this.run();
    return this.begun;
  }

  private run(): Promise<WorkerExit> {
    const { machine, logger, events, workerId } = this.options;
    logger.info(
      {
        signal: machine.signal,
        drain_started_at: iso(machine.drainStartedAt),
        deadline_at: iso(machine.deadlineAt),
        in_flight: this.options.table.ids(),
      },
      "draining: no new claims; waiting for in-flight jobs",
    );
    events.emit("drain_started", {
      worker_id: workerId,
      signal: machine.signal as string,
      drain_started_at: iso(machine.drainStartedAt) as string,
      deadline_at: iso(machine.deadlineAt) as string,
    });
    const claimsStopped = this.options.stopClaiming();
    this.options.onDrainStart();
    this.armDeadline();
    return this.finishWhenSettled(claimsStopped);
  }

  /** The one shutdown timer: fires when the machine's deadline is due, and asks the machine. */
  private armDeadline(): void {
    const { machine } = this.options;
    this.deadlineTimer = setTimeout(
      () => {
        if (!machine.checkDeadline() && machine.state === "DRAINING") this.armDeadline();
      },
      Math.max(1, machine.timeLeftMs()),
    );
  }

  /** The machine reached FORCE_TIMEOUT_PATH: log, and hand sync threads to WAIT_FOR_THREAD. */
  private onForced(): void {
    const { machine, logger, events, workerId, table, threads } = this.options;
    // Nothing new starts from now on (the job runner's gate) and no claim is waited for.
    this.options.abandonClaim();
    const waiting = threads.runningJobIds();
    // Still running (their outcome unknown), not on a thread: these are aborted and NACK'd.
    const releasing = [...table.values()]
      .filter((entry) => entry.holdsSlot && !threads.isRunning(entry.job.id))
      .map((entry) => entry.job.id);
    logger.warn(
      { deadline_at: iso(machine.deadlineAt), releasing, waiting_for_threads: waiting },
      "FORCE_TIMEOUT_PATH: shutdown_timeout reached; async handlers are aborted and will be NACK'd (remote jobs: frozen or handed to polling by their phase), sync threads are asked to stop and waited for",
    );
    events.emit("force_timeout_path", { worker_id: workerId, releasing, threads: waiting });
    if (waiting.length === 0) return;
    // Sync branch: never NACK'd. A flat grace budget from the FORCE_TIMEOUT_PATH instant, then
    // wait without bound.
    this.waitForThreads(waiting);
  }

  private waitForThreads(jobIds: string[]): void {
    const { machine, logger, events, workerId, threads } = this.options;
    const wait = machine.waitForThreads();
    if (!wait) return;
    logger.warn(
      { job_ids: jobIds, grace_ends_at: iso(wait.graceEndsAt) },
      "WAIT_FOR_THREAD: waiting for sync handler thread(s) to return (sync_handler_grace_seconds budget)",
    );
    events.emit("wait_for_thread", {
      worker_id: workerId,
      job_ids: jobIds,
      grace_ends_at: iso(wait.graceEndsAt) as string,
    });
    const onGraceEnd = () => {
      if (!machine.graceExpired()) {
        if (machine.state === "WAIT_FOR_THREAD") {
          this.graceTimer = setTimeout(onGraceEnd, Math.max(1, wait.graceEndsAt - machine.now()));
        }
        return;
      }
      const still = threads.runningJobIds();
      if (still.length === 0) return;
      logger.error(
        { job_ids: still },
        "sync_handler_grace_seconds expired; still waiting for the thread(s) without bound — only the supervisor's SIGKILL ends this (the row then stays processing for recovery)",
      );
    };
    this.graceTimer = setTimeout(onGraceEnd, Math.max(0, wait.graceEndsAt - machine.now()));
  }

  private async finishWhenSettled(claimsStopped: Promise<void>): Promise<WorkerExit> {
    const { machine, logger, events, workerId, outcomes } = this.options;
    await claimsStopped;
    await this.options.table.settled();
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.graceTimer);
    const reason = machine.settle() ?? "drained";
    await this.options.threads.close(logger);
    // Every outcome was settled: the exit is known before the row is marked stopped with it.
    const failed = outcomes.failures > 0;
    await this.options.closeDown(failed ? "record_failed" : reason);
    const released = [...outcomes.released];
    const exit: WorkerExit = failed
      ? { reason: "record_failed", exitCode: 3, released }
      : { reason, exitCode: reason === "drained" ? 0 : 1, released };
    logger.info(
      {
        exit_reason: exit.reason,
        exit_code: exit.exitCode,
        released: exit.released,
        repeated_signals: machine.repeats,
      },
      "worker stopped",
    );
    events.emit("worker_stopped", {
      worker_id: workerId,
      exit_reason: exit.reason,
      exit_code: exit.exitCode,
    });
    return exit;
  }
}

/** An instant (ms since the epoch) as ISO text, for logs and events. */
export function iso(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}
