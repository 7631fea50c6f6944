import { BatchesAdmin } from "./admin/batches-admin.js";
import type { DeadLettersAdmin } from "./admin/dead-letters-admin.js";
import { FlowsAdmin } from "./admin/flows-admin.js";
import { createAdmin } from "./admin/index.js";
import type { CancelResult, JobsAdmin } from "./admin/jobs-admin.js";
import type { QueuesAdmin } from "./admin/queues-admin.js";
import { type JobStats, splitRemoteStats } from "./admin/remote-split.js";
import type { WaitForOptions } from "./admin/wait-for-job.js";
import type { WorkersAdmin } from "./admin/workers-admin.js";
import type { Backend, PgQueryable, WorkerDetail } from "./backends/contract/index.js";
import { createBackend, parseDatabaseUrl } from "./backends/select.js";
import { SoniqError } from "./errors.js";
import {
  type Batch,
  type BatchJobSpec,
  type BatchSpec,
  batchJobName,
  checkBatchSpec,
  checkMembers,
} from "./jobs/batch.js";
import type { EnqueueOptions } from "./jobs/enqueue-options.js";
import { type EnqueuedJob, enqueuedJob } from "./jobs/enqueued-job.js";
import { type FlowOptions, type FlowSpec, flattenFlow } from "./jobs/flow.js";
import {
  JobDefinition,
  type JobEnqueuer,
  type JobOptions,
  type RemoteJobOptions,
  type SyncJobOptions,
} from "./jobs/job-definition.js";
import { JobRegistry } from "./jobs/job-registry.js";
import { type BatchCallbackRole, type JobToWrite, JobWriter } from "./jobs/job-writer.js";
import { EventBus, type EventSubscriber } from "./observability/event-bus.js";
import type { SoniqEventMap } from "./observability/events.js";
import { reportListenChange } from "./observability/listen-changes.js";
import { createLogger, type Logger } from "./observability/logger.js";
import { type MetricsSink, subscribeMetricsSink } from "./observability/metrics.js";
import { RemoteAdmin } from "./remote/remote-admin.js";
import type { ScheduleAdmin } from "./scheduler/admin.js";
import type { ScheduleDefinition, ScheduleOptions } from "./scheduler/schedule-definition.js";
import { ScheduleRegistry } from "./scheduler/schedule-registry.js";
import type { SoniqSettings } from "./settings.js";
import { resolveSettings } from "./settings-resolution.js";
import type { DeadLetterJob, EnqueueManyItem, Job, SoniqOptions } from "./soniq-options.js";
import { Worker, type WorkerOptions } from "./worker/worker.js";

export type { DeadLetterJob, EnqueueManyItem, Job, SoniqOptions } from "./soniq-options.js";

/**
 * @internal What `soniq/testing` installs on an instance: the in-memory store that replaces the
 * configured database, and what runs after each enqueue through the instance (inline mode).
 */
export interface TestingAttachment {
  /** The store every call of the instance uses from now on. */
  readonly store: Backend;
  /**
   * Runs after every enqueue through the instance, with the ids written (in input order); its
   * rejection is the enqueue's.
   */
  afterEnqueue(ids: readonly string[]): Promise<void>;
}

/** Marks Soniq instances across module copies (used by `soniq worker` to find the export). */
export const SONIQ_BRAND: unique symbol = Symbol.for("soniq.instance");

/**
 * A Soniq instance owns its settings, job registry and backend. Two instances in one process do
 * not see each other's jobs definitions or connections.
 *
 * ```ts
 * export const soniq = new Soniq({ databaseUrl: "postgres://localhost/app" });
 * export const sendEmail = soniq.job({ name: "email.send", handler: async (args: { to: string }) => … });
 * await sendEmail.enqueue({ to: "a@example.com" }, { delay: 60 });
 * ```
 */
export class Soniq implements JobEnqueuer {
  readonly [SONIQ_BRAND] = true;
  /** Resolved settings (durations in seconds). */
  readonly settings: SoniqSettings;
  /** The instance's logger. */
  readonly logger: Logger;
  /** The metrics sink given in the options, if any. */
  readonly metrics: MetricsSink | undefined;
  /**
   * @internal The emitting side of {@link Soniq.events}, for this instance's workers and
   * maintenance.
   */
  readonly eventBus: EventBus<SoniqEventMap>;
  /** Builds and writes enqueued jobs (jobs/job-writer.ts). */
  private readonly writer: JobWriter;
  /**
   * Remote jobs from outside (docs/remote-jobs.md): `complete`/`fail` for provider callbacks (by
   * job id or task id, exactly once), and the operator's `resolve`, `pollNow`, `list`, `show`,
   * `counts`.
   */
  readonly remote: RemoteAdmin;
  private readonly jobRegistry: JobRegistry;
  private readonly scheduleRegistry: ScheduleRegistry;
  private backendPromise: Promise<Backend> | undefined;
  private readonly injectedBackend: Backend | undefined;
  private closed = false;
  private testing: TestingAttachment | undefined;
  /**
   * Find, inspect and act on jobs: `list` (filters, cursor pages), `count`,
   * `countByQueueStatus`, `get` (with its timeline), `cancel` (queued or running), `retry` (run
   * now), `delete`, `bulk`. See docs/operations.md.
   */
  readonly jobs: JobsAdmin;
  /** The dead-letter queue: `list`, `get`, `replay`, `replayMany`, `delete`, `deleteMany`, `export`. */
  readonly deadLetters: DeadLettersAdmin;
  /** Queues: `list`, `pause`, `resume`, `set` (`maxRunning`). */
  readonly queues: QueuesAdmin;
  private readonly workersAdmin: WorkersAdmin;
  /** Workflows: `get` (a flow's jobs and states), `cancel`. See docs/workflows.md. */
  readonly flows: FlowsAdmin;
  /** Batches: `get` (members, callbacks, counts), `add`, `seal`. See docs/workflows.md. */
  readonly batches: BatchesAdmin;

  /**
   * @throws SoniqError `INVALID_OPTION` for unknown options or `SONIQ_*` variables and bad values;
   * `INVALID_DATABASE_URL` when the URL names no backend.
   */
  constructor(options: SoniqOptions = {}) {
    const { logger, env, backend, metrics, tracing, ...settings } = options;
    this.metrics = metrics;
    this.settings = resolveSettings(settings as Record<string, unknown>, env ?? process.env);
    if (!backend) parseDatabaseUrl(this.settings.databaseUrl);
    this.injectedBackend = backend;
    this.logger =
      logger ??
      createLogger({ level: this.settings.logLevel, pretty: process.stderr.isTTY === true });
    this.eventBus = new EventBus<SoniqEventMap>(this.logger);
    this.remote = new RemoteAdmin({
      backend: () => this.backend(),
      maxPayloadBytes: this.settings.maxPayloadBytes,
      events: this.eventBus,
      reconcilable: (name) => {
        const definition = this.jobRegistry.definitions.get(name);
        return definition === undefined ? undefined : definition.remote?.reconcile !== undefined;
      },
    });
    if (metrics) subscribeMetricsSink(this.eventBus, metrics, this.logger);
    ({
      jobs: this.jobs,
      deadLetters: this.deadLetters,
      queues: this.queues,
      workers: this.workersAdmin,
    } = createAdmin({
      backend: () => this.backend(),
      retentionSeconds: this.settings.resultRetention,
      retentionOf: (name) => this.jobRegistry.definitions.get(name)?.resultRetention,
      heartbeatTimeoutSeconds: this.settings.heartbeatTimeout,
      maxPayloadBytes: this.settings.maxPayloadBytes,
      events: this.eventBus,
      declaredQueues: () => [...this.jobRegistry.definitions.values()].map((d) => d.queue),
    }));
    this.jobRegistry = new JobRegistry(this.settings.rejectUnknownJobs);
    const retentionFor = (name: string | null): number =>
      (name === null ? undefined : this.jobRegistry.definitions.get(name)?.resultRetention) ??
      this.settings.resultRetention;
    this.batches = new BatchesAdmin({
      backend: () => this.backend(),
      retentionFor,
      add: async (batchId, jobs, connection) => {
        checkMembers(jobs, false);
        const items = jobs.map((spec, i) => this.batchItem(spec, `jobs[${i}]`));
        return this.enqueued(await this.writer.addToBatch(batchId, items, connection));
      },
    });
    this.flows = new FlowsAdmin({ backend: () => this.backend(), retentionFor });
    this.scheduleRegistry = new ScheduleRegistry({
      maxPayloadBytes: this.settings.maxPayloadBytes,
      backend: () => this.backend(),
      logger: this.logger,
    });
    this.writer = new JobWriter({
      settings: this.settings,
      backend: () => this.backend(),
      eventBus: this.eventBus,
      tracing,
    });
    tracing?.attach(this.eventBus, this.logger);
  }

  /**
   * The events of this instance's workers (the catalogue: {@link SoniqEventMap}, docs/events.md).
   * Listeners run synchronously at the moment they report and are never awaited; one that throws
   * or rejects is logged and ignored, never stranding a job.
   *
   * ```ts
   * const off = soniq.events.on("job_done", (e) => histogram.observe(e.duration_ms ?? 0));
   * ```
   */
  get events(): EventSubscriber<SoniqEventMap> {
    return this.eventBus;
  }

  /**
   * Defines and registers a job.
   * @throws SoniqError `INVALID_JOB_NAME`, `DUPLICATE_JOB`, `INVALID_OPTION`.
   */
  job<TArgs, TResult = unknown, TInput = TArgs>(
    options: JobOptions<TArgs, TResult, TInput>,
  ): JobDefinition<TArgs, TResult, TInput> {
    return this.jobRegistry.add(new JobDefinition(options, this.settings, this));
  }

  /**
   * Defines and registers a **sync** job: its handler runs on a worker thread from a pool of
   * `syncHandlerPoolSize` threads (shutdown contract, sync branch: never NACK'd; a drain waits for
   * the thread). See {@link SyncJobOptions}.
   * @throws SoniqError `INVALID_JOB_NAME`, `DUPLICATE_JOB`, `INVALID_OPTION` (e.g. a missing module).
   */
  syncJob<TArgs, TResult = unknown, TInput = TArgs>(
    options: SyncJobOptions<TArgs, TInput>,
  ): JobDefinition<TArgs, TResult, TInput> {
    return this.jobRegistry.add(
      new JobDefinition<TArgs, TResult, TInput>(options, this.settings, this),
    );
  }

  /**
   * Defines and registers a **remote** job: `submit` runs only after phase `submitting` is durable,
   * `accepted(taskId)` is written with the hand-off to polling in one owner-fenced transaction,
   * `poll` runs on any worker when due (no slot held between polls), an ambiguous submission is
   * frozen (resolved by `reconcile` or an operator). Durations in seconds. See
   * {@link RemoteJobOptions} and docs/remote-jobs.md.
   * @throws SoniqError `INVALID_JOB_NAME`, `DUPLICATE_JOB`, `INVALID_OPTION`.
   */
  remoteJob<TArgs, TResult = unknown, TInput = TArgs>(
    options: RemoteJobOptions<TArgs, TResult, TInput>,
  ): JobDefinition<TArgs, TResult, TInput> {
    return this.jobRegistry.add(
      new JobDefinition<TArgs, TResult, TInput>(options, this.settings, this),
    );
  }

  /**
   * Declares a recurring schedule: each occurrence of `cron` (in `timezone`) or of `every`
   * seconds enqueues `job` with `args`, exactly once per occurrence (docs/schedules.md). The
   * definition lives in code; it is reconciled into `soniq_schedules` when a worker starts (or by
   * `soniq schedules sync`). Nothing is written here.
   * @throws SoniqError `INVALID_SCHEDULE` (bad id, expression, time zone, `every` < 1 s, policy,
   * bounds, or a job not defined on this instance), `DUPLICATE_SCHEDULE` (the id is already
   * declared here), `INVALID_ARGS` (the arguments fail the job's schema), `INVALID_PAYLOAD`,
   * `INVALID_ENQUEUE_OPTION`.
   */
  schedule<TArgs, TResult, TInput>(
    options: ScheduleOptions<TArgs, TResult, TInput>,
  ): ScheduleDefinition {
    return this.scheduleRegistry.declare(
      options as ScheduleOptions<unknown, unknown, unknown>,
      (job) => this.jobRegistry.holds(job),
    );
  }

  /** The schedules declared on this instance, by id. */
  get scheduleDefinitions(): ReadonlyMap<string, ScheduleDefinition> {
    return this.scheduleRegistry.definitions;
  }

  /** Runtime management of schedules (list, show, preview, pause, resume, run now, remove, sync). */
  get schedules(): ScheduleAdmin {
    return this.scheduleRegistry.admin;
  }

  /** @internal A worker's scheduler subscribes to changes made through this instance. */
  onSchedulesChanged(listener: () => void): () => void {
    return this.scheduleRegistry.onChanged(listener);
  }

  /** The registered job definitions, by name. */
  get definitions(): ReadonlyMap<string, JobDefinition<unknown, unknown, unknown>> {
    return this.jobRegistry.definitions;
  }

  /**
   * The backend, created on first use.
   * @throws SoniqError `CLOSED` after {@link Soniq.close}.
   */
  backend(): Promise<Backend> {
    if (this.closed)
      return Promise.reject(new SoniqError("CLOSED", "this Soniq instance is closed"));
    this.backendPromise ??= this.injectedBackend
      ? Promise.resolve(this.injectedBackend)
      : createBackend({
          databaseUrl: this.settings.databaseUrl,
          schema: this.settings.schema,
          poolSize: this.settings.poolSize,
          pooler: this.settings.pooler,
          listenUrl: this.settings.listenUrl,
          onListenChange: (change, channel, error) =>
            reportListenChange(this.logger, this.eventBus, change, channel, error),
        });
    return this.backendPromise;
  }

  /** Creates or migrates the schema (idempotent; safe to run from several processes at once). */
  async setup(): Promise<void> {
    await (await this.backend()).setup();
  }

  /** Closes the backend. Later calls reject with `CLOSED`. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    const pending = this.backendPromise;
    this.closed = true;
    if (pending) await (await pending).close();
  }

  /**
   * @internal For `soniq/testing` only: replaces the instance's store with `attachment.store` and
   * runs `attachment.afterEnqueue` after each enqueue. A store installed before (by an earlier
   * attachment, or an in-memory one the instance opened) is closed; the configured database is
   * never opened.
   * @throws SoniqError `CLOSED` after {@link Soniq.close}; `INVALID_STATE` when the instance
   * already opened (or was given) a store that is not in memory.
   */
  async attachTesting(attachment: TestingAttachment): Promise<void> {
    if (this.closed) throw new SoniqError("CLOSED", "this Soniq instance is closed");
    const previous = this.backendPromise ?? this.injectedBackend;
    if (previous !== undefined) {
      const store = await previous;
      if (store.kind !== "memory") {
        throw new SoniqError(
          "INVALID_STATE",
          `soniq/testing replaces the instance's store with one in memory, but this instance already uses a ${store.kind} database: start testing before its first enqueue, setup or worker`,
          { details: { backend: store.kind } },
        );
      }
      if (store !== attachment.store) await store.close();
    }
    this.testing = attachment;
    this.backendPromise = Promise.resolve(attachment.store);
  }

  /** The ids, after the testing attachment's `afterEnqueue` (when one is installed) ran. */
  private async enqueued(ids: string[]): Promise<string[]> {
    if (this.testing) await this.testing.afterEnqueue(ids);
    return ids;
  }

  /** @internal Used by {@link JobDefinition.waitFor}: {@link JobsAdmin.waitFor}. */
  waitForJob(id: string, options?: WaitForOptions): Promise<unknown> {
    return this.jobs.waitFor(id, options);
  }

  /** @internal Used by {@link JobDefinition.enqueue}. */
  async enqueueDefined(
    definition: JobDefinition<unknown, unknown, unknown>,
    args: unknown,
    options: EnqueueOptions = {},
  ): Promise<string> {
    const item = { definition: () => definition, name: definition.name, args, options };
    const [id] = await this.enqueued(await this.writer.enqueue([item], options.connection));
    return id as string;
  }

  /** @internal Used by {@link JobDefinition.enqueueMany}. */
  async enqueueManyDefined(
    definition: JobDefinition<unknown, unknown, unknown>,
    items: ReadonlyArray<{ args: unknown; options?: EnqueueOptions }>,
    connection?: PgQueryable,
  ): Promise<string[]> {
    return this.enqueued(
      await this.writer.enqueue(
        items.map((item) => ({
          definition: () => definition,
          name: definition.name,
          args: item.args,
          options: item.options ?? {},
        })),
        connection,
      ),
    );
  }

  /**
   * Enqueues by name. The name must be registered unless `rejectUnknownJobs` is false.
   * Returns the promise of the job id (or the existing id for a duplicate), which also has
   * `result(options)`: waits for the job's result (`unknown`; a definition's `enqueue` types it),
   * see {@link EnqueuedJob}.
   * @throws SoniqError `UNKNOWN_JOB`, `INVALID_JOB_NAME`, `INVALID_ARGS`, `INVALID_PAYLOAD`,
   * `INVALID_ENQUEUE_OPTION`, `UNSUPPORTED` (`connection` off PostgreSQL).
   */
  enqueue(name: string, args: unknown, options: EnqueueOptions = {}): EnqueuedJob<unknown> {
    return enqueuedJob(this.enqueueByName(name, args, options), (id, waitOptions) =>
      this.jobs.waitFor(id, waitOptions),
    );
  }

  private async enqueueByName(
    name: string,
    args: unknown,
    options: EnqueueOptions,
  ): Promise<string> {
    const item = { definition: () => this.jobRegistry.definitionFor(name), name, args, options };
    const [id] = await this.enqueued(await this.writer.enqueue([item], options.connection));
    return id as string;
  }

  /**
   * Enqueues many jobs, possibly of different names, in one write (one round trip on
   * PostgreSQL). Everything is validated first: one bad item writes nothing. Ids in input order.
   * @param options.connection - PostgreSQL only: the caller's transaction client.
   * @throws as {@link Soniq.enqueue}.
   */
  async enqueueMany(
    items: readonly EnqueueManyItem[],
    options: { connection?: PgQueryable } = {},
  ): Promise<string[]> {
    return this.enqueued(
      await this.writer.enqueue(
        items.map((item) => ({
          definition: () => this.jobRegistry.definitionFor(item.name),
          name: item.name,
          args: item.args,
          options: item.options ?? {},
        })),
        options.connection,
      ),
    );
  }

  /**
   * Enqueues a flow (docs/workflows.md): `root` and, recursively, the `children` each job waits
   * for, in one transaction (PostgreSQL: inside the caller's with `options.connection`). Each job
   * with children is inserted waiting and becomes due in the transaction that ends its last child
   * well; leaves are queued at once. A child that ends dead-lettered or cancelled applies its
   * edge's policy (`onFailure`). The flow's id is the root job's id: `soniq.flows.get(id)`.
   * @returns The flow's id and every job id, breadth-first (the root first).
   * @throws SoniqError as {@link Soniq.enqueue}; `INVALID_ENQUEUE_OPTION` for a malformed tree,
   * more than 10,000 jobs, or a job with a dedup key; `UNSUPPORTED` (`connection` off PostgreSQL).
   */
  async flow(root: FlowSpec, options: FlowOptions = {}): Promise<{ id: string; ids: string[] }> {
    const flat = flattenFlow(root, options);
    const ids = await this.writer.enqueueGraph(
      flat.items.map((item) => ({
        definition: () => this.jobRegistry.definitionFor(item.name),
        name: item.name,
        args: item.args,
        options: item.options,
      })),
      flat.edges,
      0,
      options.connection,
    );
    await this.enqueued(ids);
    return { id: ids[0] as string, ids };
  }

  /**
   * Enqueues a batch (docs/workflows.md, "Batches"): its members, queued at once, and up to three
   * callbacks, each a job released **exactly once** when the last member ended — `onComplete`
   * always, `onSuccess` only if every member is done, `onFailure` only if one was dead-lettered
   * or cancelled (the one that does not apply is cancelled). Released in the transaction that
   * ends the last member (or seals an open batch), so concurrent completions, retries, crash
   * recovery and NACKs never fire one twice or early. A callback reads the members with
   * `ctx.dependencies()`. One transaction (PostgreSQL: inside the caller's with `connection`).
   * @throws SoniqError as {@link Soniq.enqueue}; `INVALID_ENQUEUE_OPTION` for no members on a
   * sealed batch, more than 10,000, a dedup key, an unknown key, `open` not a boolean, or
   * `connection` on one job (give it to the batch); `UNSUPPORTED` (`connection` off PostgreSQL).
   */
  async batch(spec: BatchSpec): Promise<Batch> {
    checkBatchSpec(spec);
    checkMembers(spec.jobs, spec.open === true);
    const members = spec.jobs.map((job, i) => this.batchItem(job, `jobs[${i}]`));
    const callbacks: Array<{ role: BatchCallbackRole; item: JobToWrite }> = [];
    const roles = [
      ["onComplete", "on_complete"],
      ["onSuccess", "on_success"],
      ["onFailure", "on_failure"],
    ] as const;
    for (const [key, role] of roles) {
      const cb = spec[key];
      if (cb !== undefined) callbacks.push({ role, item: this.batchItem(cb, key) });
    }
    const written = await this.writer.enqueueBatch(
      members,
      callbacks,
      spec.open === true,
      spec.connection,
    );
    await this.enqueued([...written.ids, ...written.callbackIds]);
    const callbackIds: Batch["callbacks"] = {};
    callbacks.forEach((cb, i) => {
      const id = written.callbackIds[i] as string;
      if (cb.role === "on_complete") callbackIds.onComplete = id;
      else if (cb.role === "on_success") callbackIds.onSuccess = id;
      else callbackIds.onFailure = id;
    });
    const batchId = written.batchId;
    return {
      id: batchId,
      ids: written.ids,
      callbacks: callbackIds,
      add: (jobs, options) => this.batches.add(batchId, jobs, options),
      seal: () => this.batches.seal(batchId),
    };
  }

  /** One job of a batch as the writer takes it. */
  private batchItem(spec: BatchJobSpec, path: string): JobToWrite {
    const name = batchJobName(spec, path);
    return {
      definition: () => this.jobRegistry.definitionFor(name),
      name,
      args: spec.args,
      options: { ...(spec.options ?? {}) },
    };
  }

  /** A job by id, with arguments and result parsed, or null. */
  async getJob(id: string): Promise<Job | null> {
    const row = await (await this.backend()).jobGet({ id });
    if (!row) return null;
    return {
      ...row,
      args: JSON.parse(row.args),
      result: row.result === null ? null : JSON.parse(row.result),
    };
  }

  /** A dead-letter entry by id, or null. */
  async getDeadLetter(id: string): Promise<DeadLetterJob | null> {
    const row = await (await this.backend()).deadLetterGet({ id });
    return row ? { ...row, args: JSON.parse(row.args) } : null;
  }

  /**
   * Moves a dead-letter entry back to the queue (attempts reset to 0). Same as
   * `soniq.deadLetters.replay(id)`.
   * @throws SoniqError `NOT_FOUND` when there is no such entry; `DEDUP_CONFLICT`.
   */
  replay(id: string): Promise<void> {
    return this.deadLetters.replay(id);
  }

  /**
   * Cancels a job, queued or running (same as `soniq.jobs.cancel(id)`, see there).
   * @returns `cancelled` (it was queued), `requested` (it runs; its owner stops it and records
   * `cancelled`) or `already_requested`.
   * @throws SoniqError `NOT_FOUND`; `INVALID_STATE` when it is done or cancelled already.
   */
  cancel(id: string): Promise<CancelResult> {
    return this.jobs.cancel(id);
  }

  /**
   * Counts by state, camelCase like every JSON view (docs/operations.md, "JSON output"):
   * `{ total, queued, processing, done, deadLetter, cancelled, remoteSubmitting, remoteAccepted,
   * remoteFrozen }`. Remote jobs (`submitting`, `accepted`, `frozen`) are counted apart from
   * `processing`; `queued` includes jobs not yet due. Live states are exact; finished ones come from
   * the counters (docs/backends.md, "Counting without scanning").
   * @throws SoniqError the backend's connection errors (`DATABASE_UNREACHABLE`, `SCHEMA_NOT_READY`, …)
   * as opening it reports them.
   */
  async stats(): Promise<JobStats> {
    const backend = await this.backend();
    const [stats, remote] = await Promise.all([
      backend.jobStats(),
      backend.submissions.submissionCountsByQueue(),
    ]);
    return splitRemoteStats(stats, remote);
  }

  /**
   * Worker incarnations, newest first, with host, pid, queues, concurrency, heartbeat age, shutdown
   * state, drain start, deadline and in-flight job ids. `live` is judged on the database clock by
   * the heartbeat timeout each worker declared (this instance's `heartbeatTimeout` only for
   * workers that declared none).
   */
  workers(): Promise<WorkerDetail[]> {
    return this.workersAdmin.list();
  }

  /** A worker for this instance's jobs (not started). See {@link Worker}. */
  worker(options: WorkerOptions = {}): Worker {
    return new Worker(
      {
        jobs: this.jobRegistry.definitions,
        settings: this.settings,
        logger: this.logger,
        eventBus: this.eventBus,
        backend: () => this.backend(),
        scheduleDefinitions: this.scheduleDefinitions,
        onSchedulesChanged: (listener) => this.onSchedulesChanged(listener),
      },
      options,
    );
  }
}

/** True when `value` is a Soniq instance (from any copy of the package). */
export function isSoniq(value: unknown): value is Soniq {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Record<symbol, unknown>)[SONIQ_BRAND] === true
  );
}
