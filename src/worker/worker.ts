/**
 * The worker: claims jobs into its concurrency slots, runs their handlers, records every outcome
 * with a fenced write, heartbeats its row, and drains on stop following the shutdown contract
 * (seed 000, DESIGN.md §2): stop claiming → wait for in-flight jobs → at `shutdown_timeout` abort
 * their signals, wait the settle window, NACK what is still running → STOPPED.
 *
 * Library code never exits the process: {@link Worker.stop} resolves with an exit code the CLI uses.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Backend, ClaimedJob } from "../backends/backend.js";
import { isSoniqError, SoniqError } from "../errors.js";
import { type JobDefinition, validateArgs } from "../jobs/job-definition.js";
import { toJsonText } from "../jobs/payload.js";
import { retryDelaySeconds } from "../jobs/retry-policy.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import { createMaintenance, type Maintenance } from "../maintenance/maintenance.js";
import type { Logger } from "../observability/logger.js";
import { GuardedMetrics } from "../observability/metrics.js";
import { reconcileSchedules } from "../scheduler/reconcile.js";
import { Scheduler } from "../scheduler/scheduler.js";
import { SchedulerService } from "../scheduler/scheduler-service.js";
import { crossFieldProblems, type SoniqSettings, settingsSchema } from "../settings.js";
import type { Soniq } from "../soniq.js";
import { checkThreadHandlers } from "./check-thread-handlers.js";
import { CompletionBatcher } from "./completion-batcher.js";
import { errorText } from "./error-text.js";
import type { InFlight, Outcome } from "./in-flight.js";
import { LazyAbortController } from "./lazy-abort-controller.js";
import { Permits } from "./permits.js";
import { runAsyncHandler } from "./run-async-handler.js";
import { runSyncHandler, type ThreadRunner } from "./run-sync-handler.js";
import { type ExitReason, ShutdownMachine, type ShutdownState } from "./shutdown-machine.js";
import { ThreadPool } from "./thread-pool.js";
import { WakeLatch } from "./wake-latch.js";
import { withTimeout } from "./with-timeout.js";

/** Per-worker overrides of the instance settings (same units: seconds). */
export interface WorkerOptions {
  /** Slots: jobs run at once. Default: the instance's `concurrency`. */
  concurrency?: number;
  /** Queues to claim from; `null` = all. Default: the instance's `queues`. */
  queues?: string[] | null;
  /** Seconds a drain waits before releasing jobs. Default: the instance's `shutdownTimeout`. */
  shutdownTimeout?: number;
  /** Seconds an aborted handler gets before its row is NACK'd. Default: `shutdownSettle`. */
  shutdownSettle?: number;
  /** Seconds between heartbeats. Default: `heartbeatInterval`. */
  heartbeatInterval?: number;
  /** Seconds between polls. Default: `pollInterval`. */
  pollInterval?: number;
  /** Aborting this signal starts a drain, like SIGTERM (for embedding in a server). */
  signal?: AbortSignal;
}

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

/** The settings a worker may override, validated like the instance's. */
const WORKER_OVERRIDES = settingsSchema
  .pick({
    concurrency: true,
    queues: true,
    shutdownTimeout: true,
    shutdownSettle: true,
    heartbeatInterval: true,
    pollInterval: true,
    syncHandlerPoolSize: true,
    syncHandlerGraceSeconds: true,
  })
  .partial()
  .strict();

/**
 * Longest a claim, a heartbeat or one try of an outcome write may take, in milliseconds: a
 * database that stops answering (network black hole) must not hang a drain.
 */
const DB_CALL_TIMEOUT_MS = 10_000;

/** Longest wait between two tries of a failed write, in milliseconds. */
const RECORD_RETRY_CAP_MS = 2000;
/** Once draining, how long past the shutdown deadline a failing write keeps trying (ms). */
const RECORD_GRACE_MS = 10_000;
/** How long a failing write of the worker's own row keeps trying (ms). */
const BOOKKEEPING_GRACE_MS = 2000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A worker bound to one Soniq instance. Create it with `soniq.worker(options)`. */
export class Worker {
  /** This incarnation's id (fresh at every start of a process; DESIGN.md §3.4). */
  readonly id: string;
  private readonly settings: SoniqSettings & { concurrency: number; queues: string[] | null };
  private readonly logger: Logger;
  private readonly machine: ShutdownMachine;
  private readonly inflight = new Map<string, InFlight>();
  private readonly latch = new WakeLatch();
  private readonly permits: Permits;
  private pool: ThreadPool | undefined;
  /** Sync jobs whose thread has not returned yet, by job id. */
  private readonly threads = new Map<string, Promise<void>>();
  private graceTimer: NodeJS.Timeout | undefined;
  private readonly metrics: GuardedMetrics;
  private completions: CompletionBatcher | undefined;
  private backend: Backend | undefined;
  /** new → starting → running → done (start-up lifecycle, separate from the shutdown machine). */
  private phase: "new" | "starting" | "running" | "done" = "new";
  private loopDone: Promise<void> = Promise.resolve();
  private heartbeat: PeriodicService | undefined;
  private maintenance: Maintenance | undefined;
  /** Takes due schedule occurrences (scheduler.ts): the leader's service and the heartbeat catch-up. */
  private scheduler: Scheduler | undefined;
  private unsubscribeSchedules: (() => void) | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private recordFailures = 0;
  private claimInFlight = false;
  private drainBegun = false;
  /** Start of this worker's current unbroken run of successful heartbeats (ms), if any. */
  private healthySince: number | undefined;
  private lastBeat: number | undefined;
  /** Slots in use: jobs whose outcome is not known yet (their outcome writes do not hold one). */
  private busySlots = 0;
  private suspectOrphans = false;
  private readonly released: string[] = [];
  private finishedPromise: Promise<WorkerExit> | undefined;
  private resolveFinished: ((exit: WorkerExit) => void) | undefined;

  constructor(
    private readonly soniq: Soniq,
    options: WorkerOptions = {},
    private readonly clock: () => number = Date.now,
  ) {
    const { signal, ...overrides } = options;
    const input = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
    const checked = WORKER_OVERRIDES.safeParse(input);
    if (!checked.success) {
      const problems = checked.error.issues.map((i) =>
        i.code === "unrecognized_keys"
          ? `unknown worker option(s) ${i.keys.join(", ")}`
          : `${String(i.path[0])}: ${i.message}`,
      );
      throw new SoniqError("INVALID_OPTION", problems.join("; "), { details: { problems } });
    }
    // Only what was given: the schema's defaults must not override the instance's settings.
    const given = Object.fromEntries(Object.entries(checked.data).filter(([key]) => key in input));
    const merged = { ...soniq.settings, ...given };
    const crossField = crossFieldProblems(merged);
    if (crossField.length > 0) throw new SoniqError("INVALID_OPTION", crossField.join("; "));
    this.settings = merged;
    this.id = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.logger = soniq.logger.child({ worker_id: this.id });
    this.machine = new ShutdownMachine(
      merged.shutdownTimeout,
      clock,
      merged.syncHandlerGraceSeconds ?? merged.jobTimeout,
    );
    this.permits = new Permits(merged.syncHandlerPoolSize);
    this.metrics = new GuardedMetrics(soniq.metrics, this.logger);
    if (signal) {
      if (signal.aborted) this.machine.requestStop("abort");
      else signal.addEventListener("abort", () => void this.stop("abort"), { once: true });
    }
  }

  /** The shutdown state (RUNNING, DRAINING, FORCE_TIMEOUT_PATH, STOPPED). */
  get state(): ShutdownState {
    return this.machine.state;
  }

  /** Readiness for load balancers: true while started and RUNNING, false the moment draining starts. */
  get ready(): boolean {
    return this.phase === "running" && this.machine.state === "RUNNING";
  }

  /** Jobs currently claimed by this worker. */
  get inFlightCount(): number {
    return this.inflight.size;
  }

  /** Resolves when the worker has stopped (after {@link Worker.stop} or an abort). */
  get finished(): Promise<WorkerExit> {
    this.finishedPromise ??= new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
    return this.finishedPromise;
  }

  /**
   * Registers the worker row and starts the claim loop and heartbeat.
   * A worker stopped before it started (e.g. its `signal` was already aborted) starts nothing and
   * is finished at once. When start-up fails, {@link Worker.finished} resolves with
   * `start_failed` (exit code 2) and the error is thrown.
   * @throws SoniqError `WORKER_START` with no registered jobs or when already started;
   * `SCHEMA_NOT_READY` before `soniq setup`; connection errors from the backend; `WORKER_START`
   * when a sync handler's module fails to load on a thread (file, line and cause in the message).
   */
  async start(): Promise<void> {
    if (this.phase !== "new")
      throw new SoniqError("WORKER_START", "this worker was already started");
    if (this.soniq.jobs.size === 0) {
      throw new SoniqError(
        "WORKER_START",
        "no jobs are registered: define jobs with soniq.job(...) before starting a worker",
      );
    }
    void this.finished;
    if (this.machine.state !== "RUNNING") {
      this.phase = "done";
      this.machine.settle();
      this.resolveFinished?.({ reason: "drained", exitCode: 0, released: [] });
      return;
    }
    this.phase = "starting";
    let backend: Backend;
    try {
      await checkThreadHandlers(this.soniq.jobs.values()); // before any claim: fail at start-up
      backend = await this.soniq.backend();
      await backend.registerWorker({
        id: this.id,
        hostname: hostname(),
        pid: process.pid,
        queues: this.settings.queues,
        concurrency: this.settings.concurrency,
      });
    } catch (err) {
      this.phase = "done";
      this.machine.settle();
      this.resolveFinished?.({ reason: "start_failed", exitCode: 2, released: [] });
      throw err;
    }
    if (this.soniq.scheduleDefinitions.size > 0) {
      try {
        await reconcileSchedules(backend, this.soniq.scheduleDefinitions.values(), this.logger);
      } catch (err) {
        if (isSoniqError(err, "INVALID_ARGS")) {
          this.phase = "done";
          this.machine.settle();
          await backend.markWorkerStopped(this.id).catch(() => undefined);
          this.resolveFinished?.({ reason: "start_failed", exitCode: 2, released: [] });
          throw err;
        }
        this.logger.warn(
          { err: errorText(err, 300) },
          "syncing the declared schedules failed; the stored schedules still run",
        );
      }
    }
    this.backend = backend;
    this.completions = new CompletionBatcher(backend, this.settings.resultRetention);
    const queues = this.settings.queues;
    this.unsubscribe = backend.subscribe((queue) => {
      if (queue === "*" || queues === null || queues.includes(queue)) this.latch.wake();
    });
    this.logger.info(
      {
        concurrency: this.settings.concurrency,
        queues,
        jobs: [...this.soniq.jobs.keys()],
        backend: backend.kind,
      },
      "worker started",
    );
    this.metrics.start();
    this.startServices(backend);
    // Recovery at start-up (one of its clocks): jobs of stopped or unknown owners. Owners with a
    // stale heartbeat wait for the leader's rescuer, once that worker has itself heartbeated for
    // heartbeatTimeout (after an outage every heartbeat is stale, live workers' too).
    await this.maintenance?.rescuer.runOnce({ staleMeansDead: false }).catch((err: unknown) => {
      this.logger.warn(
        { err: errorText(err, 300) },
        "start-up recovery failed; the maintenance loop will retry",
      );
    });
    // Only now may stop() begin a drain itself; one that came earlier is begun just below.
    this.phase = "running";
    this.loopDone = this.claimLoop();
    if (this.machine.state !== "RUNNING") this.beginDrain();
  }

  /**
   * Starts a drain (idempotent): stop claiming, wait for in-flight jobs up to `shutdown_timeout`,
   * then abort and NACK what still runs. The first call owns the deadline; repeats are logged and
   * change nothing. Resolves when STOPPED.
   * @param signal - what asked: "SIGTERM", "SIGINT", "api", …
   */
  stop(signal = "api"): Promise<WorkerExit> {
    const result = this.machine.requestStop(signal);
    if (!result.first) {
      if (this.machine.state !== "STOPPED") {
        this.logger.warn(
          {
            signal,
            drain_started_at: iso(this.machine.drainStartedAt),
            deadline_at: iso(this.machine.deadlineAt),
          },
          "stop requested again; the first request owns the deadline",
        );
      }
      return this.finished;
    }
    if (this.phase === "new") {
      this.machine.settle();
      void this.finished;
      this.resolveFinished?.({ reason: "drained", exitCode: 0, released: [] });
      return this.finished;
    }
    // While starting, start() begins the drain as soon as the worker row exists.
    if (this.phase === "running") this.beginDrain();
    return this.finished;
  }

  private beginDrain(): void {
    if (this.drainBegun) return;
    this.drainBegun = true;
    this.logger.info(
      {
        signal: this.machine.signal,
        drain_started_at: iso(this.machine.drainStartedAt),
        deadline_at: iso(this.machine.deadlineAt),
        in_flight: [...this.inflight.keys()],
      },
      "draining: no new claims; waiting for in-flight jobs",
    );
    this.metrics.emit("drain_started", {
      worker_id: this.id,
      signal: this.machine.signal,
      drain_started_at: iso(this.machine.drainStartedAt),
      deadline_at: iso(this.machine.deadlineAt),
    });
    this.latch.wake();
    void this.stopMaintenance();
    this.deadlineTimer = setTimeout(() => this.onDeadline(), this.machine.timeLeftMs());
    void this.finishWhenSettled();
  }

  private onDeadline(): void {
    if (!this.machine.checkDeadline()) {
      if (this.machine.state === "DRAINING") {
        this.deadlineTimer = setTimeout(
          () => this.onDeadline(),
          Math.max(1, this.machine.timeLeftMs()),
        );
      }
      return;
    }
    const threads = [...this.threads.keys()];
    // Still running (their outcome unknown), not on a thread: these are aborted and NACK'd.
    const released = [...this.inflight.values()]
      .filter((entry) => entry.holdsSlot && !this.threads.has(entry.job.id))
      .map((entry) => entry.job.id);
    this.logger.warn(
      {
        deadline_at: iso(this.machine.deadlineAt),
        releasing: released,
        waiting_for_threads: threads,
      },
      "FORCE_TIMEOUT_PATH: shutdown_timeout reached; async handlers are aborted and will be NACK'd, sync threads are asked to stop and waited for",
    );
    this.metrics.emit("force_timeout_path", { worker_id: this.id, releasing: released, threads });
    for (const entry of this.inflight.values()) entry.force?.();
    if (threads.length === 0) return;
    // Sync branch: never NACK'd. A flat grace budget from this instant, then wait without bound.
    const wait = this.machine.waitForThreads();
    if (!wait) return;
    this.logger.warn(
      { job_ids: threads, grace_ends_at: iso(wait.graceEndsAt) },
      "WAIT_FOR_THREAD: waiting for sync handler thread(s) to return (sync_handler_grace_seconds budget)",
    );
    this.metrics.emit("wait_for_thread", {
      worker_id: this.id,
      job_ids: threads,
      grace_ends_at: iso(wait.graceEndsAt),
    });
    this.graceTimer = setTimeout(
      () => {
        if (this.threads.size === 0) return;
        this.logger.error(
          { job_ids: [...this.threads.keys()] },
          "sync_handler_grace_seconds expired; still waiting for the thread(s) without bound — only the supervisor's SIGKILL ends this (the row then stays processing for recovery)",
        );
      },
      Math.max(0, wait.graceEndsAt - this.clock()),
    );
  }

  private async finishWhenSettled(): Promise<void> {
    await this.loopDone;
    while (this.inflight.size > 0) {
      await Promise.all([...this.inflight.values()].map((e) => e.done));
    }
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.graceTimer);
    const reason = this.machine.settle() ?? "drained";
    if (this.pool) {
      await this.pool.destroy().catch((err: unknown) => {
        this.logger.warn(
          { err: errorText(err, 300) },
          "closing the sync-handler thread pool failed",
        );
      });
    }
    // Heartbeats went on until every claimed row was finished or released; now they may stop.
    await this.heartbeat?.stop(2000);
    this.unsubscribe?.();
    try {
      await this.record(
        () => (this.backend as Backend).markWorkerStopped(this.id),
        "worker's stopped status",
        undefined,
        true,
      );
    } catch {
      // already logged by record()
    }
    const exit: WorkerExit =
      this.recordFailures > 0
        ? { reason: "record_failed", exitCode: 3, released: [...this.released] }
        : { reason, exitCode: reason === "drained" ? 0 : 1, released: [...this.released] };
    this.logger.info(
      {
        exit_reason: exit.reason,
        exit_code: exit.exitCode,
        released: exit.released,
        repeated_signals: this.machine.repeats,
      },
      "worker stopped",
    );
    this.metrics.emit("worker_stopped", {
      worker_id: this.id,
      exit_reason: exit.reason,
      exit_code: exit.exitCode,
    });
    this.metrics.end();
    this.resolveFinished?.(exit);
  }

  // ---- heartbeat and maintenance -------------------------------------------------------

  private startServices(backend: Backend): void {
    const interval = this.settings.heartbeatInterval * 1000;
    this.heartbeat = new PeriodicService({
      name: "heartbeat",
      logger: this.logger,
      intervalMs: interval,
      tick: async () => {
        try {
          await withTimeout(
            backend.heartbeat(this.id, this.machine.state === "RUNNING" ? "running" : "draining"),
            DB_CALL_TIMEOUT_MS,
            "heartbeat",
          );
        } catch (err) {
          this.healthySince = undefined;
          this.lastBeat = undefined;
          throw err;
        }
        const now = this.clock();
        // A break in the beats (the event loop or the database stalled) restarts the count.
        if (this.lastBeat === undefined || now - this.lastBeat > 2 * interval + 1000) {
          this.healthySince = now;
        }
        this.lastBeat = now;
        await this.releaseOrphans(backend);
        await this.catchUpSchedules();
      },
    });
    void this.heartbeat.start();
    this.scheduler = new Scheduler({
      store: backend.schedules,
      logger: this.logger,
      emit: (name, payload) => this.metrics.emit(name, { worker_id: this.id, ...payload }),
    });
    const schedulerService = new SchedulerService({
      scheduler: this.scheduler,
      logger: this.logger,
      maxSleepMs: Math.max(1000, this.settings.heartbeatInterval * 3 * 1000),
      stopBoundMs: 2000,
    });
    this.unsubscribeSchedules = this.soniq.onSchedulesChanged(() => schedulerService.wake());
    this.maintenance = createMaintenance({
      leaderServices: [schedulerService],
      backend,
      workerId: this.id,
      settings: this.settings,
      logger: this.logger,
      metrics: this.metrics,
      clock: this.clock,
      healthyForSeconds: () =>
        this.healthySince === undefined ? 0 : (this.clock() - this.healthySince) / 1000,
    });
    void this.maintenance.service.start();
  }

  /**
   * After a claim whose answer was lost, rows may be ours that nobody runs (the worker is live, so
   * crash recovery would never free them). Release every owned row this worker is not tracking.
   * Runs only when no claim is in flight, so a claim that is still answering is never raced.
   */
  private async releaseOrphans(backend: Backend): Promise<void> {
    if (!this.suspectOrphans || this.claimInFlight) return;
    this.suspectOrphans = false;
    const owned = await withTimeout(backend.ownedBy(this.id), DB_CALL_TIMEOUT_MS, "owned rows");
    for (const row of owned) {
      if (this.inflight.has(row.id) || this.claimInFlight) continue;
      if (await backend.nack(row.id, { workerId: row.workerId, claimToken: row.claimToken })) {
        this.logger.warn({ job_id: row.id }, "released a job claimed by an answer that was lost");
      }
    }
  }

  /**
   * The schedules' second clock (seed 004): on every heartbeat, take occurrences overdue by more
   * than the lease time-to-live — the lease holder's scheduler would have taken them, so it is
   * dead or stuck. The compare-and-set makes this safe alongside a live leader. Only while
   * RUNNING (nothing is enqueued once a drain began); errors are logged, the heartbeat goes on.
   */
  private async catchUpSchedules(): Promise<void> {
    const scheduler = this.scheduler;
    const maintenance = this.maintenance;
    if (!scheduler || !maintenance || this.machine.state !== "RUNNING") return;
    try {
      const result = await withTimeout(
        scheduler.tick(maintenance.leaseSeconds),
        DB_CALL_TIMEOUT_MS,
        "schedule catch-up",
      );
      if (result.taken > 0) {
        this.logger.warn(
          { taken: result.taken },
          "caught up schedule occurrences the lease holder did not take",
        );
      }
    } catch (err) {
      this.logger.warn({ err: errorText(err, 300) }, "schedule catch-up failed; will retry");
    }
  }

  /**
   * At drain start: report `draining` now, stop maintenance (which stops the leader's scheduler —
   * its write in flight commits or rolls back first — and hands the lease on).
   */
  private async stopMaintenance(): Promise<void> {
    void this.heartbeat?.runNow();
    this.unsubscribeSchedules?.();
    await this.maintenance?.service.stop(2000);
  }

  // ---- claim loop ------------------------------------------------------------------------

  private async claimLoop(): Promise<void> {
    const backend = this.backend as Backend;
    let failures = 0;
    while (this.machine.state === "RUNNING") {
      const free = this.settings.concurrency - this.busySlots;
      if (free <= 0) {
        await this.latch.wait(this.settings.pollInterval * 1000);
        continue;
      }
      let jobs: ClaimedJob[];
      try {
        this.claimInFlight = true;
        jobs = await withTimeout(
          backend.claim({ workerId: this.id, queues: this.settings.queues, limit: free }),
          DB_CALL_TIMEOUT_MS,
          "claim",
          (late) => {
            // The claim went through after all: these rows are ours but nobody runs them.
            for (const job of late) this.track(job, () => this.releaseUnstarted(job));
          },
        ).finally(() => {
          this.claimInFlight = false;
        });
        failures = 0;
      } catch (err) {
        failures += 1;
        const backoff = Math.min(
          5000,
          this.settings.pollInterval * 1000 * 2 ** Math.min(failures, 6),
        );
        this.logger.error({ err: errorText(err, 500), retry_in_ms: backoff }, "claim failed");
        // Its answer may have been lost after the database took the rows: check what we own.
        this.suspectOrphans = true;
        if (isSoniqError(err, "CLOSED")) break;
        await this.latch.wait(backoff);
        continue;
      }
      // Run what the claim returned, even when a stop arrived while it was in flight: those jobs
      // were ours before the drain began and are in-flight work like any other (DRAINING only
      // stops new claims; the deadline still bounds them).
      for (const job of jobs) this.track(job, () => this.runJob(job));
      if (jobs.length < free) await this.latch.wait(this.settings.pollInterval * 1000);
    }
  }

  private track(job: ClaimedJob, run: () => Promise<void>): void {
    const entry: InFlight = {
      job,
      owner: { workerId: job.workerId, claimToken: job.claimToken },
      controller: new LazyAbortController(),
      holdsSlot: true,
      done: Promise.resolve(),
    };
    this.busySlots += 1;
    this.inflight.set(job.id, entry);
    entry.done = run()
      .catch(async (err: unknown) => {
        // A bug of ours must not strand the row: record it as a failed attempt (fenced, so a
        // no-op when the outcome was already written).
        this.logger.error(
          { job_id: job.id, err: errorText(err, 1000) },
          "unexpected error while running a job; recording it as a failed attempt",
        );
        await this.recordOutcome(
          job,
          { kind: "error", error: err },
          this.soniq.jobs.get(job.name),
        ).catch(() => undefined);
      })
      .finally(() => {
        this.freeSlot(entry);
        this.inflight.delete(job.id);
      });
  }

  /**
   * Gives the job's slot back once its outcome is known, so the next claim overlaps the outcome
   * write (which the drain still waits for, through `inflight`).
   */
  private freeSlot(entry: InFlight): void {
    if (!entry.holdsSlot) return;
    entry.holdsSlot = false;
    this.busySlots -= 1;
    this.latch.wake();
  }

  /** Releases (NACKs) a job that will not run here: a claim whose answer arrived too late. */
  private async releaseUnstarted(job: ClaimedJob): Promise<void> {
    const owner = { workerId: job.workerId, claimToken: job.claimToken };
    const ok = await this.record(
      () => (this.backend as Backend).nack(job.id, owner),
      "release",
      job.id,
    ).catch(() => false);
    if (ok) this.logger.info({ job_id: job.id }, "released a job whose claim answered too late");
  }

  // ---- running one job -------------------------------------------------------------------

  private async runJob(job: ClaimedJob): Promise<void> {
    const entry = this.inflight.get(job.id) as InFlight;
    const log = this.logger.child({
      job_id: job.id,
      job_name: job.name,
      attempt: job.attempts + 1,
    });
    const definition = this.soniq.jobs.get(job.name);
    if (!definition) {
      log.error(
        { reason: "unknown_job" },
        "no handler is registered for this job name; moving it to the dead-letter queue",
      );
      await this.recordDeadLetter(
        job,
        `no handler registered for job name ${job.name}`,
        "unknown_job",
        false,
      );
      return;
    }
    let args: unknown;
    try {
      args = JSON.parse(job.args);
      if (definition.argsSchema) {
        const checked = await validateArgs(definition.argsSchema, args);
        if (!checked.ok) throw new SoniqError("INVALID_ARGS", checked.message);
        args = checked.value;
      }
    } catch (err) {
      log.error(
        { reason: "invalid_args", err: errorText(err, 500) },
        "invalid arguments; moving the job to the dead-letter queue",
      );
      await this.recordDeadLetter(
        job,
        `invalid arguments: ${errorText(err)}`,
        "invalid_args",
        false,
      );
      return;
    }
    log.debug(this.settings.logArgs ? { args } : {}, "job started");
    const started = this.clock();
    const outcome =
      definition.kind === "sync"
        ? await runSyncHandler(entry, definition, args, log, this.threadRunner())
        : await runAsyncHandler(
            entry,
            definition,
            args,
            log,
            this.id,
            this.settings.shutdownSettle,
          );
    this.freeSlot(entry);
    await this.recordOutcome(job, outcome, definition, log, this.clock() - started);
    // A sync job's entry lasts until its thread returns: the drain waits for it (WAIT_FOR_THREAD).
    if (entry.thread) await entry.thread;
  }

  private async recordDeadLetter(
    job: ClaimedJob,
    error: string,
    reason: string,
    countAttempt: boolean,
  ): Promise<void> {
    const owner = { workerId: job.workerId, claimToken: job.claimToken };
    await this.record(
      () => (this.backend as Backend).deadLetter(job.id, owner, error, reason, countAttempt),
      "dead-letter move",
      job.id,
    ).catch(() => undefined);
  }

  /** What the sync executor needs from this worker: permits, the lazily created pool, thread tracking. */
  private threadRunner(): ThreadRunner {
    return {
      workerId: this.id,
      permits: this.permits,
      pool: () => {
        this.pool ??= new ThreadPool(this.settings.syncHandlerPoolSize);
        return this.pool;
      },
      threadStarted: (jobId, thread) => {
        this.threads.set(jobId, thread);
      },
      threadEnded: (jobId) => {
        this.threads.delete(jobId);
        this.latch.wake();
      },
    };
  }

  /** The fenced write an outcome needs. A result that is not JSON turns success into failure. */
  private planWrite(
    job: ClaimedJob,
    outcome: Outcome,
    definition: JobDefinition<unknown, unknown, unknown> | undefined,
    log: Logger,
  ): { outcome: Outcome; what: string; write: () => Promise<boolean> } {
    const backend = this.backend as Backend;
    const owner = { workerId: job.workerId, claimToken: job.claimToken };
    switch (outcome.kind) {
      case "success": {
        let text: string | null;
        try {
          text =
            outcome.value === undefined
              ? null
              : toJsonText(outcome.value, `result of ${job.name}`, this.settings.maxPayloadBytes);
        } catch (err) {
          return this.planWrite(job, { kind: "error", error: err }, definition, log);
        }
        const completions = this.completions as CompletionBatcher;
        return {
          outcome,
          what: "completion",
          write: () => completions.complete({ id: job.id, owner, result: text }),
        };
      }
      case "snooze":
        return {
          outcome,
          what: "snooze",
          write: () => backend.snooze(job.id, owner, outcome.seconds),
        };
      case "released":
        return { outcome, what: "NACK", write: () => backend.nack(job.id, owner) };
      case "error":
      case "timeout": {
        const attempt = job.attempts + 1;
        const text = errorText(outcome.error);
        if (attempt >= job.maxAttempts || !definition) {
          return {
            outcome,
            what: "dead-letter move",
            write: () => backend.deadLetter(job.id, owner, text, "max_attempts_exceeded", true),
          };
        }
        const delay = retryDelaySeconds(definition.retry, attempt, outcome.error);
        if (delay.problem) log.warn({ problem: delay.problem }, "retry policy problem");
        return {
          outcome,
          what: `retry in ${delay.seconds.toFixed(2)} s`,
          write: () => backend.retry(job.id, owner, text, delay.seconds),
        };
      }
    }
  }

  /** Writes an outcome (fenced). Returns whether the row changed; undefined when it could not be written. */
  private async recordOutcome(
    job: ClaimedJob,
    outcome: Outcome,
    definition?: JobDefinition<unknown, unknown, unknown>,
    log: Logger = this.logger.child({ job_id: job.id }),
    durationMs?: number,
  ): Promise<boolean | undefined> {
    const plan = this.planWrite(job, outcome, definition, log);
    let changed: boolean;
    try {
      changed = await this.record(plan.write, plan.what, job.id);
    } catch {
      return undefined;
    }
    const resolved = plan.outcome;
    const fields = { duration_ms: durationMs, outcome: resolved.kind };
    if (changed && resolved.kind !== "released") {
      const event =
        resolved.kind === "success"
          ? "job_done"
          : resolved.kind === "snooze"
            ? "job_snoozed"
            : plan.what === "dead-letter move"
              ? "job_dead_lettered"
              : "job_failed";
      this.metrics.emit(event, {
        worker_id: this.id,
        job_id: job.id,
        job_name: job.name,
        duration_ms: durationMs,
      });
    }
    if (!changed) {
      log.warn(
        fields,
        `${plan.what} was fenced out: the row is no longer ours (recovered or finished elsewhere); nothing written`,
      );
    } else if (resolved.kind === "success") {
      log.info(fields, "job done");
    } else if (resolved.kind === "released") {
      this.released.push(job.id);
      this.metrics.emit("shutdown_nack", {
        worker_id: this.id,
        job_id: job.id,
        job_name: job.name,
        reason: "shutdown_timeout",
      });
      log.warn(
        { ...fields, reason: "shutdown_timeout", event: "shutdown_nack" },
        "job NACK'd: back to queued, attempts unchanged",
      );
    } else if (resolved.kind === "snooze") {
      log.info(fields, `job snoozed for ${resolved.seconds} s`);
    } else {
      log.warn({ ...fields, err: errorText(resolved.error, 500) }, `job failed: ${plan.what}`);
    }
    return changed;
  }

  /**
   * Runs a write, retrying failures (the database may be restarting) with a backoff that grows to
   * {@link RECORD_RETRY_CAP_MS}. A transient failure is never recorded as a job failure. While
   * RUNNING it retries until the write lands (claims fail too while the database is away, so the
   * worker takes no new work meanwhile). Once draining, it gives up {@link RECORD_GRACE_MS} after
   * the later of the shutdown deadline and its first attempt: the row is left `processing` for
   * crash recovery and, for an outcome, the worker exits with code 3.
   */
  private async record<T>(
    write: () => Promise<T>,
    what: string,
    jobId?: string,
    /** Not a job's outcome (the worker row): give up after 2 s of failures, never count it. */
    bookkeeping = false,
  ): Promise<T> {
    const firstTry = this.clock();
    /** When to give up, or undefined while RUNNING (an outcome waits for the database). */
    const giveUpAt = (): number | undefined => {
      if (bookkeeping) return firstTry + BOOKKEEPING_GRACE_MS;
      if (this.machine.state === "RUNNING") return undefined;
      return Math.max(this.machine.deadlineAt ?? firstTry, firstTry) + RECORD_GRACE_MS;
    };
    let lastError: unknown;
    for (let attempt = 0; ; attempt++) {
      const limit = giveUpAt();
      // One try never runs past the give-up time (at least 500 ms, so a slow answer can land).
      const tryMs =
        limit === undefined
          ? DB_CALL_TIMEOUT_MS
          : Math.min(DB_CALL_TIMEOUT_MS, Math.max(500, limit - this.clock()));
      try {
        return await withTimeout(write(), tryMs, what);
      } catch (err) {
        lastError = err;
        if (isSoniqError(err, "CLOSED") || isSoniqError(err, "SCHEMA_NOT_READY")) break;
      }
      let wait = Math.min(RECORD_RETRY_CAP_MS, 100 * 2 ** attempt);
      const end = giveUpAt();
      if (end !== undefined) {
        const left = end - this.clock();
        if (left <= 0) break;
        wait = Math.min(wait, left);
      }
      if (attempt === 2) {
        this.logger.warn(
          { job_id: jobId, err: errorText(lastError, 300), retry_in_ms: wait },
          `cannot record the ${what} yet (database unreachable?); retrying`,
        );
      }
      await sleep(wait);
    }
    if (!bookkeeping) this.recordFailures += 1;
    this.logger.error(
      { job_id: jobId, err: errorText(lastError, 500) },
      `could not record the ${what}; the row stays as it was for recovery`,
    );
    throw lastError;
  }
}

function iso(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}
