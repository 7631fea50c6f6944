/**
 * `soniq.batch()`'s shapes (docs/workflows.md, "Batches"): the members, the callbacks and the
 * handle a batch is returned as. Pure: validation only.
 */
import type { PgQueryable } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import type { EnqueueOptions } from "./enqueue-options.js";

/** The most members one batch may hold (over every `add`, checked per call). */
export const MAX_BATCH_JOBS = 10_000;

/** One job of a batch: a member or a callback. */
export interface BatchJobSpec {
  /** The job: its definition (anything with a `name`), or its name. */
  job: { readonly name: string } | string;
  /** Its arguments (a callback's handler reads the members with `ctx.dependencies()`). */
  args: unknown;
  /** Its enqueue options; not `after`, dedup keys or `connection`. */
  options?: Omit<EnqueueOptions, "after" | "onDependencyFailure" | "connection">;
}

/** What `soniq.batch()` takes. */
export interface BatchSpec {
  /** The members (at least one unless `open`). */
  jobs: readonly BatchJobSpec[];
  /** Enqueued (released) exactly once when the last member ended, however each ended. */
  onComplete?: BatchJobSpec;
  /** Released exactly once when the last member ended, if every member is done; else cancelled. */
  onSuccess?: BatchJobSpec;
  /**
   * Released exactly once when the last member ended, if any member was dead-lettered or
   * cancelled; else cancelled.
   */
  onFailure?: BatchJobSpec;
  /**
   * Keep the batch open for `batch.add(…)`: no callback is released before `batch.seal()`, even
   * when every member so far has ended. Default false (sealed at once).
   */
  open?: boolean;
  /** PostgreSQL only: the caller's transaction client; the batch exists iff it commits. */
  connection?: PgQueryable;
}

/** A batch as `soniq.batch()` returns it. */
export interface Batch {
  /** The batch's id (`soniq.batches.get(id)`). */
  readonly id: string;
  /** The members' ids, in input order. */
  readonly ids: readonly string[];
  /** The callbacks' job ids. */
  readonly callbacks: { onComplete?: string; onSuccess?: string; onFailure?: string };
  /**
   * Adds members while the batch is open (see `soniq.batches.add`).
   * @throws SoniqError `INVALID_STATE` once sealed.
   */
  add(jobs: readonly BatchJobSpec[], options?: { connection?: PgQueryable }): Promise<string[]>;
  /** Seals the batch (see `soniq.batches.seal`); false when it was sealed already. */
  seal(): Promise<boolean>;
}

function bad(message: string): SoniqError {
  return new SoniqError("INVALID_ENQUEUE_OPTION", message);
}

/** The keys a {@link BatchSpec} may have. */
const SPEC_KEYS = new Set(["jobs", "onComplete", "onSuccess", "onFailure", "open", "connection"]);
/** The keys a {@link BatchJobSpec} (and a flow's node, with its own) may have. */
const JOB_KEYS = new Set(["job", "args", "options"]);

/**
 * Refuses a key of `value` not in `known` (a misspelt `onComplete` would silently be a batch
 * without that callback), as `soniq.enqueue` refuses an unknown option.
 * @throws SoniqError `INVALID_ENQUEUE_OPTION` naming the key and the known ones.
 */
export function refuseUnknownKeys(value: object, known: ReadonlySet<string>, path: string): void {
  for (const key of Object.keys(value)) {
    if (!known.has(key)) {
      throw bad(`unknown key "${key}" in ${path} (known: ${[...known].join(", ")})`);
    }
  }
}

/**
 * Checks `soniq.batch()`'s spec itself (its members and callbacks are checked one by one).
 * @throws SoniqError `INVALID_ENQUEUE_OPTION` for a spec that is not an object, an unknown key,
 * or an `open` that is not a boolean.
 */
export function checkBatchSpec(spec: unknown): asserts spec is BatchSpec {
  if (spec === null || typeof spec !== "object") throw bad("batch must be an object");
  refuseUnknownKeys(spec, SPEC_KEYS, "batch");
  const open = (spec as BatchSpec).open;
  if (open !== undefined && typeof open !== "boolean") throw bad("batch.open must be a boolean");
}

/**
 * The name of `spec`'s job.
 * @throws SoniqError `INVALID_ENQUEUE_OPTION` when `spec` names no job, or has an unknown key.
 */
export function batchJobName(spec: BatchJobSpec, path: string): string {
  if (spec === null || typeof spec !== "object") throw bad(`${path} must be an object`);
  refuseUnknownKeys(spec, JOB_KEYS, path);
  const name = typeof spec.job === "string" ? spec.job : spec.job?.name;
  if (typeof name !== "string") throw bad(`${path}.job must be a job definition or a job name`);
  return name;
}

/**
 * Checks a list of members.
 * @throws SoniqError `INVALID_ENQUEUE_OPTION` for a list that is not an array, empty when
 * `allowEmpty` is false, or longer than {@link MAX_BATCH_JOBS}.
 */
export function checkMembers(jobs: unknown, allowEmpty: boolean): asserts jobs is BatchJobSpec[] {
  if (!Array.isArray(jobs)) throw bad("jobs must be a list");
  if (jobs.length === 0 && !allowEmpty) {
    throw bad("a sealed batch needs at least one job (give open: true to add them later)");
  }
  if (jobs.length > MAX_BATCH_JOBS) throw bad(`a batch holds at most ${MAX_BATCH_JOBS} jobs`);
}
