import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { WaitForOptions } from "../admin/wait-for-job.js";
import { SoniqError } from "../errors.js";
import {
  REMOTE_OPTION_KEYS,
  type RemoteHandlers,
  type RemoteSpec,
  remoteSpecOf,
} from "../remote/remote-job.js";
import { valueText } from "../value-text.js";
import { assertConcurrencySettings, type ConcurrencySettings } from "./concurrency.js";
import type { JobContext } from "./context.js";
import type { EnqueueOptions } from "./enqueue-options.js";
import { assertMaxAttempts, assertPriority, assertQueue } from "./enqueue-options.js";
import { type EnqueuedJob, enqueuedJob } from "./enqueued-job.js";
import { assertJobName } from "./job-name.js";
import { assertRateLimitSettings, type RateLimitSettings } from "./rate-limit.js";
import { assertRetryPolicy, DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry-policy.js";

/**
 * A handler: async work on the event loop. Its return value (JSON) is stored as the job's result;
 * returning a {@link Snooze} (`return snooze(30)`) runs the job again later without spending an
 * attempt. Throwing fails the attempt.
 */
export type JobHandler<TArgs, TResult> = (
  args: TArgs,
  ctx: JobContext,
) => Promise<TResult> | TResult;

/** Settings shared by async and sync jobs. */
export interface JobSettings<TArgs, TInput = TArgs> {
  /** Dotted lower-case name, unique in the instance (e.g. `email.send`). */
  name: string;
  /** Queue (default `default`). */
  queue?: string;
  /** Integer -1000..1000, lower runs first (default 0). */
  priority?: number;
  /** Runs before the dead-letter queue (default: the instance's `maxAttempts`, 5). */
  maxAttempts?: number;
  /** Delay before a retry (default: exponential from 1 s, doubling, capped at 1 h, ±10%). */
  retry?: RetryPolicy;
  /** `job_timeout` in **seconds**; 0 = none (default: the instance's `jobTimeout`, 300). */
  timeout?: number;
  /** Deduplicate by the arguments: a job with the same name and arguments already stored is returned instead. */
  uniqueByArgs?: boolean;
  /**
   * Per-key concurrency (docs/flow-control.md): each job gets a key at enqueue, and at most
   * `limit` jobs of one key run at once across every worker process; the others stay queued,
   * attempts untouched. Not for remote jobs.
   * @throws SoniqError `INVALID_OPTION` (at definition) unless `{ key: function, limit: integer >= 1 }`.
   */
  concurrency?: ConcurrencySettings<TInput>;
  /**
   * Rate limit (docs/flow-control.md, "Rate limits"): at most `limit` jobs of one key start per
   * `per` **seconds**, across every worker process; the others stay queued, attempts untouched,
   * and start when the window allows. The key: `key(args)`, else `concurrency.key`, else the
   * job's name. Not for remote jobs.
   * @throws SoniqError `INVALID_OPTION` (at definition) unless `{ limit: integer >= 1, per:
   * seconds from 0.001 to 86400, key?: function }`, or when `key` is given next to `concurrency`.
   */
  rateLimit?: RateLimitSettings<TInput>;
  /**
   * How long a finished (done or cancelled) job of this definition is kept, with its result and
   * its dedup key, in **seconds** (default: the instance's `resultRetention`, 7 days). `0` keeps
   * nothing: the job is deleted when it finishes (no result to read, `jobs.get` finds nothing,
   * its dedup key is free at once) — the cheapest completion (docs/performance.md, "What
   * retention costs"). Dead-lettered jobs follow `deadLetterRetention` instead.
   */
  resultRetention?: number;
  /**
   * Argument schema (any Standard Schema: zod, valibot, arktype…), checked at enqueue and
   * again before the handler runs. The handler receives the schema's output.
   */
  args?: StandardSchemaV1<TInput, TArgs>;
  /**
   * The version of this job's arguments: an integer from 1 to 2147483647 (default 1). Each job is
   * stored with the version of the definition that enqueued it, and a worker claims a job only
   * when its own definition of the name has a version >= the job's: during a rolling deploy, jobs
   * enqueued by new code wait for upgraded workers instead of failing on old ones (README,
   * "Deploying new job code"; docs/operations.md). Raise it when the arguments change in a way
   * the previous code cannot run; give {@link JobSettings.upgrade} to run older jobs.
   */
  version?: number;
  /**
   * Turns the arguments of a job enqueued by an older version of this definition (`fromVersion`,
   * >= 1 and below {@link JobSettings.version}) into this version's arguments. Runs on the worker
   * before the argument schema check, only for older jobs; may be async. Without it an older
   * job's arguments go to the schema check (and the handler) as stored. Throwing fails the
   * attempt like a handler error (retried with backoff, dead-lettered `max_attempts_exceeded`
   * when the attempts run out), so a deploy that fixes the upgrade can still run the job.
   * Needs `version` >= 2.
   */
  upgrade?: (args: unknown, fromVersion: number) => TInput | Promise<TInput>;
}

/** What `soniq.job(...)` takes: an async handler that runs on the event loop. */
export interface JobOptions<TArgs, TResult, TInput = TArgs> extends JobSettings<TArgs, TInput> {
  /** The work. Receives the arguments and a {@link JobContext}. */
  handler: JobHandler<TArgs, TResult>;
}

/**
 * What `soniq.syncJob(...)` takes: a **sync handler** that runs on a worker thread (CPU-bound or
 * blocking work). The handler lives in its own module, whose export (default: `default`) is
 * `(args, ctx: ThreadJobContext) => result` (sync or async). Arguments and the result cross the
 * thread boundary by structured clone; the result is stored as JSON.
 */
export interface SyncJobOptions<TArgs, TInput = TArgs> extends JobSettings<TArgs, TInput> {
  /** The handler module: a `file:` URL (e.g. `new URL("./resize.js", import.meta.url)`) or an absolute path. `.ts` works without a build step. */
  handlerModule: URL | string;
  /** The export to call (default `default`). */
  exportName?: string;
}

/**
 * What `soniq.remoteJob(...)` takes: the shared job settings (no `timeout`: each remote call is
 * bounded by `submitTimeout`) and the remote handlers and settings ({@link RemoteHandlers}).
 */
export type RemoteJobOptions<TArgs, TResult = unknown, TInput = TArgs> = Omit<
  JobSettings<TArgs, TInput>,
  "timeout"
> &
  RemoteHandlers<TArgs, TResult>;

/**
 * Async handlers run on the event loop; sync handlers on the worker-thread pool; remote jobs
 * submit to and poll a remote API (src/remote/remote-job.ts).
 */
export type JobKind = "async" | "sync" | "remote";

/** Enqueues through the owning instance (implemented by `Soniq`). */
export interface JobEnqueuer {
  enqueueDefined(
    definition: JobDefinition<unknown, unknown, unknown>,
    args: unknown,
    options?: EnqueueOptions,
  ): Promise<string>;
  enqueueManyDefined(
    definition: JobDefinition<unknown, unknown, unknown>,
    items: ReadonlyArray<{ args: unknown; options?: EnqueueOptions }>,
    connection?: EnqueueOptions["connection"],
  ): Promise<string[]>;
  /** Waits for job `id` to finish (`soniq.jobs.waitFor`). */
  waitForJob(id: string, options?: WaitForOptions): Promise<unknown>;
}

/** A registered job: its settings, its handler and a typed `enqueue`. */
export class JobDefinition<TArgs, TResult, TInput = TArgs> {
  readonly name: string;
  readonly queue: string;
  readonly priority: number;
  readonly maxAttempts: number;
  readonly retry: RetryPolicy;
  /** Seconds; 0 = none. */
  readonly timeout: number;
  readonly uniqueByArgs: boolean;
  /** Per-key concurrency (see `JobSettings.concurrency`); undefined: none. */
  readonly concurrency: ConcurrencySettings<unknown> | undefined;
  /** Rate limit (see `JobSettings.rateLimit`); undefined: none. */
  readonly rateLimit: RateLimitSettings<unknown> | undefined;
  /** Seconds a finished job is kept (`0`: nothing kept); undefined: the instance's setting. */
  readonly resultRetention: number | undefined;
  readonly argsSchema: StandardSchemaV1<TInput, TArgs> | undefined;
  /** The version stamped on every job this definition enqueues (>= 1; see `JobSettings.version`). */
  readonly version: number;
  /** Turns an older job's arguments into this version's (see `JobSettings.upgrade`). */
  readonly upgrade: ((args: unknown, fromVersion: number) => unknown) | undefined;
  /** `async` (event loop, `handler`) or `sync` (worker thread, `handlerModule`). */
  readonly kind: JobKind;
  /** The async handler (kind `async`). */
  readonly handler: JobHandler<TArgs, TResult> | undefined;
  /** The sync handler's module as a `file:` URL string (kind `sync`). */
  readonly handlerModule: string | undefined;
  /** The sync handler's export name (kind `sync`). */
  readonly exportName: string;
  /** The remote job's handlers and settings (kind `remote`). */
  readonly remote: RemoteSpec | undefined;
  private readonly enqueuer: JobEnqueuer;

  /**
   * Use `soniq.job(...)` rather than this constructor.
   * @throws SoniqError `INVALID_JOB_NAME`, `INVALID_OPTION`, `INVALID_ENQUEUE_OPTION`.
   */
  constructor(
    options:
      | JobOptions<TArgs, TResult, TInput>
      | SyncJobOptions<TArgs, TInput>
      | RemoteJobOptions<TArgs, TResult, TInput>,
    defaults: { maxAttempts: number; jobTimeout: number },
    enqueuer: JobEnqueuer,
  ) {
    const isRemote = "submit" in options;
    const known = isRemote
      ? [
          "name",
          "queue",
          "priority",
          "maxAttempts",
          "retry",
          "uniqueByArgs",
          "resultRetention",
          "args",
          "version",
          "upgrade",
          ...REMOTE_OPTION_KEYS,
        ]
      : [
          "name",
          "queue",
          "priority",
          "maxAttempts",
          "retry",
          "timeout",
          "uniqueByArgs",
          "concurrency",
          "rateLimit",
          "resultRetention",
          "args",
          "version",
          "upgrade",
          "handler" in options ? "handler" : "handlerModule",
          ...("handler" in options ? [] : ["exportName"]),
        ];
    for (const key of Object.keys(options)) {
      if (!known.includes(key)) {
        throw new SoniqError(
          "INVALID_OPTION",
          `job ${valueText(options.name)}: unknown option ${JSON.stringify(key)}`,
        );
      }
    }
    assertJobName(options.name);
    this.remote = undefined;
    if (isRemote) {
      this.kind = "remote";
      this.handler = undefined;
      this.handlerModule = undefined;
      this.exportName = "default";
      this.remote = remoteSpecOf(options as unknown as Record<string, unknown>, options.name);
    } else if ("handler" in options) {
      if (typeof options.handler !== "function") {
        throw new SoniqError("INVALID_OPTION", `job ${options.name}: handler must be a function`);
      }
      this.kind = "async";
      this.handler = options.handler;
      this.handlerModule = undefined;
      this.exportName = "default";
    } else {
      this.kind = "sync";
      this.handler = undefined;
      this.handlerModule = toModuleUrl(options.handlerModule, options.name);
      this.exportName = options.exportName ?? "default";
      if (typeof this.exportName !== "string" || this.exportName.length === 0) {
        throw new SoniqError(
          "INVALID_OPTION",
          `job ${options.name}: exportName must be a non-empty string`,
        );
      }
    }
    this.name = options.name;
    this.queue = options.queue ?? "default";
    assertQueue(this.queue);
    this.priority = options.priority ?? 0;
    assertPriority(this.priority);
    this.maxAttempts = options.maxAttempts ?? defaults.maxAttempts;
    assertMaxAttempts(this.maxAttempts);
    this.retry = options.retry ?? DEFAULT_RETRY_POLICY;
    assertRetryPolicy(this.retry, `job ${this.name}`);
    // A remote job's calls are bounded by its submitTimeout; it has no job_timeout of its own.
    this.timeout = isRemote
      ? 0
      : ((options as JobSettings<TArgs, TInput>).timeout ?? defaults.jobTimeout);
    if (!Number.isFinite(this.timeout) || this.timeout < 0) {
      throw new SoniqError(
        "INVALID_OPTION",
        `job ${this.name}: timeout must be >= 0 seconds (0 = none)`,
      );
    }
    this.uniqueByArgs = options.uniqueByArgs ?? false;
    const concurrency = isRemote ? undefined : (options as JobSettings<TArgs, TInput>).concurrency;
    if (concurrency !== undefined) {
      assertConcurrencySettings(concurrency, `job ${this.name}: concurrency`);
    }
    this.concurrency = concurrency as ConcurrencySettings<unknown> | undefined;
    const rateLimit = isRemote ? undefined : (options as JobSettings<TArgs, TInput>).rateLimit;
    if (rateLimit !== undefined) {
      assertRateLimitSettings(rateLimit, `job ${this.name}: rateLimit`, concurrency !== undefined);
    }
    this.rateLimit = rateLimit as RateLimitSettings<unknown> | undefined;
    this.resultRetention = options.resultRetention;
    if (
      this.resultRetention !== undefined &&
      (typeof this.resultRetention !== "number" ||
        !Number.isFinite(this.resultRetention) ||
        this.resultRetention < 0)
    ) {
      throw new SoniqError(
        "INVALID_OPTION",
        `job ${this.name}: resultRetention must be a number of seconds >= 0 (0 = keep nothing)`,
      );
    }
    if (options.args !== undefined && typeof options.args?.["~standard"]?.validate !== "function") {
      throw new SoniqError(
        "INVALID_OPTION",
        `job ${this.name}: args must be a Standard Schema (zod, valibot, arktype…)`,
      );
    }
    this.argsSchema = options.args;
    this.version = options.version ?? 1;
    assertJobVersion(this.version, `job ${this.name}: version`);
    if (options.upgrade !== undefined && typeof options.upgrade !== "function") {
      throw new SoniqError("INVALID_OPTION", `job ${this.name}: upgrade must be a function`);
    }
    if (options.upgrade !== undefined && this.version < 2) {
      throw new SoniqError(
        "INVALID_OPTION",
        `job ${this.name}: upgrade needs version >= 2 (it turns the arguments of older versions into this version's)`,
      );
    }
    this.upgrade = options.upgrade;
    this.enqueuer = enqueuer;
  }

  /**
   * Enqueues one job with typed arguments. Returns the promise of its id (or the existing id for
   * a duplicate), which also has `result(options)`: waits for the job's result, typed from this
   * definition ({@link EnqueuedJob}).
   * @throws SoniqError `INVALID_ARGS`, `INVALID_PAYLOAD`, `INVALID_ENQUEUE_OPTION`, `UNSUPPORTED`.
   */
  enqueue(args: TInput, options?: EnqueueOptions): EnqueuedJob<TResult> {
    return enqueuedJob<TResult>(
      this.enqueuer.enqueueDefined(this as JobDefinition<unknown, unknown, unknown>, args, options),
      (id, waitOptions) => this.enqueuer.waitForJob(id, waitOptions),
    );
  }

  /**
   * Enqueues many jobs in one write (one round trip on PostgreSQL); ids in input order.
   * Validation happens for all before anything is written: one bad item writes nothing.
   * @param connection - PostgreSQL only: the caller's transaction client.
   * @throws as {@link JobDefinition.enqueue}.
   */
  enqueueMany(
    items: ReadonlyArray<{ args: TInput; options?: Omit<EnqueueOptions, "connection"> }>,
    connection?: EnqueueOptions["connection"],
  ): Promise<string[]> {
    return this.enqueuer.enqueueManyDefined(
      this as JobDefinition<unknown, unknown, unknown>,
      items,
      connection,
    );
  }

  /**
   * Waits until job `id` (one of this definition's, e.g. from {@link JobDefinition.enqueue})
   * finishes, in this process or any other, and resolves with what its handler returned, typed
   * from this definition. The same as `soniq.jobs.waitFor(id, options)`: see there for what it
   * reads and how often (docs/operations.md, "Waiting for a job's result").
   *
   * ```ts
   * const id = await render.enqueue({ page: 7 });
   * const { url } = await render.waitFor(id, { timeout: 60 }); // seconds
   * ```
   * @param options.timeout - most **seconds** to wait (default: no bound).
   * @param options.signal - aborting it ends the wait (`WAIT_ABORTED`, its reason as `cause`).
   * @throws SoniqError `JOB_FAILED` (dead-lettered: its last error), `JOB_CANCELLED`,
   * `NOT_FOUND`, `WAIT_TIMEOUT`, `WAIT_ABORTED`, `INVALID_OPTION`.
   */
  async waitFor(id: string, options?: WaitForOptions): Promise<TResult> {
    return (await this.enqueuer.waitForJob(id, options)) as TResult;
  }
}

/** The highest job version: versions are stored as 32-bit integers. */
export const MAX_JOB_VERSION = 2147483647;

/**
 * Checks a job version (`what` names it in the message).
 * @throws SoniqError `INVALID_OPTION` unless an integer from 1 to {@link MAX_JOB_VERSION}.
 */
export function assertJobVersion(version: unknown, what: string): asserts version is number {
  if (
    typeof version !== "number" ||
    !Number.isInteger(version) ||
    version < 1 ||
    version > MAX_JOB_VERSION
  ) {
    throw new SoniqError(
      "INVALID_OPTION",
      `${what} must be an integer from 1 to ${MAX_JOB_VERSION}, got ${JSON.stringify(version) ?? String(version)}`,
    );
  }
}

/** Runs a Standard Schema; returns the output value or the issues as one message. */
export async function validateArgs<TArgs>(
  schema: StandardSchemaV1<unknown, TArgs>,
  value: unknown,
): Promise<{ ok: true; value: TArgs } | { ok: false; message: string }> {
  let result = schema["~standard"].validate(value);
  if (result instanceof Promise) result = await result;
  if (result.issues) {
    const message = result.issues
      .map((issue) => {
        const path = (issue.path ?? [])
          .map((p) =>
            typeof p === "object" && p !== null && "key" in p ? String(p.key) : String(p),
          )
          .join(".");
        return path ? `${path}: ${issue.message}` : issue.message;
      })
      .join("; ");
    return { ok: false, message };
  }
  return { ok: true, value: result.value };
}

/**
 * A sync handler module as a `file:` URL string.
 * @throws SoniqError `INVALID_OPTION` for a relative path, a non-file URL or a missing file.
 */
function toModuleUrl(module: URL | string, job: string): string {
  let url: URL;
  if (module instanceof URL) url = module;
  else if (typeof module === "string" && module.startsWith("file:")) url = new URL(module);
  else if (typeof module === "string" && isAbsolute(module)) url = pathToFileURL(module);
  else {
    throw new SoniqError(
      "INVALID_OPTION",
      `job ${job}: handlerModule must be a file: URL or an absolute path (e.g. new URL("./handler.js", import.meta.url)), got ${JSON.stringify(String(module))}`,
    );
  }
  if (url.protocol !== "file:") {
    throw new SoniqError("INVALID_OPTION", `job ${job}: handlerModule must be a file: URL`);
  }
  if (!existsSync(fileURLToPath(url))) {
    throw new SoniqError(
      "INVALID_OPTION",
      `job ${job}: handlerModule ${fileURLToPath(url)} does not exist`,
    );
  }
  return url.href;
}
