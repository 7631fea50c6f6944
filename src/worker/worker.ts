/**
 * The public worker: claims jobs into its concurrency slots, runs their handlers, records every
 * outcome with a fenced write, heartbeats its row, and drains on stop following the shutdown
 * contract (docs/shutdown.md): stop claiming → wait for in-flight jobs → at
 * `shutdown_timeout` abort their signals, wait the settle window, NACK what is still running →
 * STOPPED. This file holds the options, `start`, `stop` and the state the outside sees; the parts
 * are built by `runtime.ts` (claim loop, job runner, outcome recorder, heartbeat, drain).
 *
 * Library code never exits the process: {@link Worker.stop} resolves with an exit code the CLI uses.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Backend } from "../backends/contract/index.js";
import { startupBudgetWarning } from "../deploy/budget.js";
import { SoniqError } from "../errors.js";
import type { JobDefinition } from "../jobs/job-definition.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import type { Logger } from "../observability/logger.js";
import type { ScheduleDefinition } from "../scheduler/schedule-definition.js";
import { type SoniqSettings, settingsSchema } from "../settings.js";
import { crossFieldProblems } from "../settings-resolution.js";
import { checkThreadHandlers } from "./check-thread-handlers.js";
import { iso, type WorkerExit } from "./drain.js";
import { InFlightTable } from "./in-flight.js";
import type { OutcomeRecorderOptions, RecordedOutcome } from "./outcome-recorder.js";
import { buildRuntime, startServices, type WorkerRuntime, type WorkerSettings } from "./runtime.js";
import { ShutdownMachine, type ShutdownState } from "./shutdown-machine.js";
import { WakeLatch } from "./wake-latch.js";

export type { WorkerExit } from "./drain.js";

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
  /**
   * Most jobs claimed beyond the free slots (the prefetch window, docs/shutdown.md); 0 = off.
   * Default: the instance's `prefetch`.
   */
  prefetch?: number;
  /** Aborting this signal starts a drain, like SIGTERM (for embedding in a server). */
  signal?: AbortSignal;
}

/**
 * What a worker needs from its Soniq instance (a `Soniq` is one): narrow, so `worker/` does not
 * import the instance and the instance can import the worker.
 */
export interface WorkerDeps {
  /** The registered job definitions, by name. */
  readonly jobs: ReadonlyMap<string, JobDefinition<unknown, unknown, unknown>>;
  /** The instance's resolved settings (durations in seconds). */
  readonly settings: SoniqSettings;
  readonly logger: Logger;
  /** The instance's event bus: the worker emits its events (docs/events.md) here. */
  readonly eventBus: EventBus<SoniqEventMap>;
  /**
   * The backend, opened on first use.
   * @throws SoniqError `CLOSED` once the instance is closed; connection errors.
   */
  backend(): Promise<Backend>;
  /** The declared schedules, reconciled into the database at start (docs/schedules.md). */
  readonly scheduleDefinitions?: ReadonlyMap<string, ScheduleDefinition>;
  /** Subscribes to schedule changes made through the instance; returns the unsubscribe. */
  onSchedulesChanged?(listener: () => void): () => void;
  /**
   * @internal Told of every outcome this worker writes (`soniq/testing`'s drain); must not throw.
   * See {@link OutcomeRecorderOptions.observe}.
   */
  observeOutcome?(recorded: RecordedOutcome): void;
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
    prefetch: true,
    syncHandlerPoolSize: true,
    syncHandlerGraceSeconds: true,
  })
  .partial()
  .strict();

/** new → starting → running (with its runtime) → done: the start-up life, not the shutdown one. */
type Life =
  | { phase: "new" }
  | { phase: "starting" }
  | { phase: "running"; runtime: WorkerRuntime }
  | { phase: "done" };

/** A worker bound to one Soniq instance. Create it with `soniq.worker(options)`. */
export class Worker {
  /**
   * This incarnation's id: fresh at every start of a process, so a restarted worker never takes a
   * dead predecessor's claims for its own (docs/reliability.md, "Crash recovery, in brief").
   */
  readonly id: string;
  private readonly settings: WorkerSettings;
  private readonly logger: Logger;
  private readonly machine: ShutdownMachine;
  private readonly events: EventBus<SoniqEventMap>;
  private readonly latch = new WakeLatch();
  private readonly table = new InFlightTable(() => this.latch.wake());
  private life: Life = { phase: "new" };
  private finishedPromise: Promise<WorkerExit> | undefined;
  private resolveFinished: ((exit: WorkerExit) => void) | undefined;

  /**
   * @param deps - the instance's jobs, settings, logger, event bus and backend.
   * @param clock - milliseconds since the epoch; every shutdown instant is read from it.
   * @throws SoniqError `INVALID_OPTION` for unknown options and bad values.
   */
  constructor(
    private readonly deps: WorkerDeps,
    options: WorkerOptions = {},
    clock: () => number = Date.now,
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
    const merged = { ...deps.settings, ...given };
    const crossField = crossFieldProblems(merged);
    if (crossField.length > 0) throw new SoniqError("INVALID_OPTION", crossField.join("; "));
    this.settings = merged;
    this.id = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.logger = deps.logger.child({ worker_id: this.id });
    this.machine = new ShutdownMachine(
      merged.shutdownTimeout,
      clock,
      merged.syncHandlerGraceSeconds ?? merged.jobTimeout,
    );
    this.events = deps.eventBus;
    if (signal) {
      if (signal.aborted) this.machine.requestStop("abort");
      else signal.addEventListener("abort", () => void this.stop("abort"), { once: true });
    }
  }

  /** The shutdown state (RUNNING, DRAINING, FORCE_TIMEOUT_PATH, WAIT_FOR_THREAD, STOPPED). */
  get state(): ShutdownState {
    return this.machine.state;
  }

  /** Readiness for load balancers: true while started and RUNNING, false the moment draining starts. */
  get ready(): boolean {
    return this.life.phase === "running" && this.machine.state === "RUNNING";
  }

  /** Jobs currently claimed by this worker: running or being recorded, and in its prefetch buffer. */
  get inFlightCount(): number {
    const buffered = this.life.phase === "running" ? this.life.runtime.claimLoop.buffered : 0;
    return this.table.size + buffered;
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
   * `SCHEMA_NOT_READY` before `soniq setup`, or when the schema's newest applied migration is
   * older than this build's (nothing registered, no job claimed: docs/backends.md, "The
   * upgrade"); connection errors from the backend.
   */
  async start(): Promise<void> {
    if (this.life.phase !== "new")
      throw new SoniqError("WORKER_START", "this worker was already started");
    if (this.deps.jobs.size === 0) {
      throw new SoniqError(
        "WORKER_START",
        "no jobs are registered: define jobs with soniq.job(...) before starting a worker",
      );
    }
    void this.finished;
    if (this.machine.state !== "RUNNING") {
      this.end({ reason: "drained", exitCode: 0, released: [] });
      return;
    }
    this.life = { phase: "starting" };
    let backend: Backend;
    try {
      await checkThreadHandlers(this.deps.jobs.values()); // before any claim: fail at start-up
      backend = await this.deps.backend();
      await backend.workerRegister({
        id: this.id,
        hostname: hostname(),
        pid: process.pid,
        queues: this.settings.queues,
        concurrency: this.settings.concurrency,
        // What it can run, for the leader's search for jobs no live worker can run.
        jobVersions: Object.fromEntries(
          [...this.deps.jobs].map(([name, definition]) => [name, definition.version]),
        ),
      });
      // Liveness is judged by the timeout this worker keeps, whatever the caller's settings.
      await backend.admin.workerDeclare({
        workerId: this.id,
        heartbeatTimeoutSeconds: this.settings.heartbeatTimeout,
      });
    } catch (err) {
      this.end({ reason: "start_failed", exitCode: 2, released: [] });
      throw err;
    }
    const runtime = buildRuntime({
      backend,
      workerId: this.id,
      settings: this.settings,
      jobs: this.deps.jobs,
      logger: this.logger,
      events: this.events,
      machine: this.machine,
      table: this.table,
      latch: this.latch,
      ...(this.deps.onSchedulesChanged
        ? { onSchedulesChanged: (l: () => void) => this.deps.onSchedulesChanged?.(l) ?? (() => {}) }
        : {}),
      ...(this.deps.observeOutcome
        ? { observeOutcome: (r: RecordedOutcome) => this.deps.observeOutcome?.(r) }
        : {}),
    });
    try {
      await runtime.schedules.reconcile(this.deps.scheduleDefinitions?.values() ?? []);
    } catch (err) {
      runtime.schedules.close();
      runtime.unsubscribe();
      await backend.workerMarkStopped({ workerId: this.id }).catch(() => undefined);
      this.end({ reason: "start_failed", exitCode: 2, released: [] });
      throw err;
    }
    this.logger.info(
      {
        concurrency: this.settings.concurrency,
        queues: this.settings.queues,
        jobs: [...this.deps.jobs.keys()],
        backend: backend.kind,
      },
      "worker started",
    );
    const syncJobs = [...this.deps.jobs.values()].some((job) => job.kind === "sync");
    const short = startupBudgetWarning(this.settings, syncJobs);
    if (short) {
      this.logger.warn(
        {
          termination_grace_seconds: short.verdict.graceSeconds,
          required_seconds: short.verdict.requiredSeconds,
        },
        short.message,
      );
    }
    this.events.emit("worker_started", {
      worker_id: this.id,
      concurrency: this.settings.concurrency,
      queues: this.settings.queues,
      backend: backend.kind,
    });
    await startServices(runtime);
    await runtime.maintenance.recoverAtStart();
    // Only now may stop() begin a drain itself; one that came earlier is begun just below.
    this.life = { phase: "running", runtime };
    void runtime.claimLoop.start();
    runtime.handOff.open(backend.handOff);
    void runtime.remotePoller?.start();
    if (this.machine.state !== "RUNNING") this.beginDrain(runtime);
  }

  /**
   * Starts a drain (idempotent): stop claiming, wait for in-flight jobs up to `shutdown_timeout`,
   * then abort and NACK what still runs. The first call owns the deadline; repeats are logged and
   * change nothing. Resolves when STOPPED. Never rejects.
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
    if (this.life.phase === "new") {
      // Stays "new": a later start() starts nothing and finds the worker finished.
      void this.finished;
      this.machine.settle();
      this.resolveFinished?.({ reason: "drained", exitCode: 0, released: [] });
      return this.finished;
    }
    // While starting, start() begins the drain as soon as the worker row exists.
    if (this.life.phase === "running") this.beginDrain(this.life.runtime);
    return this.finished;
  }

  private beginDrain(runtime: WorkerRuntime): void {
    void runtime.drain.begin().then((exit) => this.resolveFinished?.(exit));
  }

  /** Finishes a worker that never ran (stopped before start, or start-up failed). */
  private end(exit: WorkerExit): void {
    this.life = { phase: "done" };
    this.machine.settle();
    this.resolveFinished?.(exit);
  }
}
