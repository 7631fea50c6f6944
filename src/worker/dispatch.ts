/**
 * What a claimed job turns into before it runs: run it with its parsed (upgraded, when it is older
 * than its definition, and, with a schema, validated) arguments; fail the attempt (its definition's
 * `upgrade` threw: a deploy may fix that); or dead-letter it (no handler registered, or arguments
 * that do not parse or that its schema rejects — what no deploy fixes, docs/operations.md).
 */
import type { ClaimedJob } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import { type JobDefinition, validateArgs } from "../jobs/job-definition.js";
import { errorText } from "./error-text.js";

type Definition = JobDefinition<unknown, unknown, unknown>;

/** What a job turned into before its outcome is written. */
export type Dispatch =
  | {
      kind: "dead_letter";
      reason: "unknown_job" | "invalid_args";
      /** The text stored with the dead-letter row. */
      error: string;
      /** The validation error, for the log (invalid_args). */
      detail?: string;
    }
  | {
      /**
       * A failed attempt before the handler: the definition's `upgrade` threw, or the job's
       * version is newer than the definition's (a claim never takes such a job; only a claim
       * without versions could). Recorded as a handler error: retried with backoff.
       */
      kind: "fail";
      definition: Definition;
      error: unknown;
    }
  | { kind: "run"; definition: Definition; args: unknown };

/**
 * True when dispatching `job` runs user code before the handler (the definition's argument schema,
 * or its `upgrade` for an older job) or may fail the attempt (a newer job): the caller gates it
 * and awaits {@link dispatchJob}; otherwise {@link dispatchUnchecked} answers without a promise.
 */
export function checksArguments(definition: Definition | undefined, job: ClaimedJob): boolean {
  return (
    definition !== undefined &&
    (definition.argsSchema !== undefined || job.version !== definition.version)
  );
}

/**
 * Decides what to do with a claimed job: run it, fail the attempt (upgrade failed) or dead-letter
 * it (unknown job, bad args). Runs the definition's `upgrade` (for a job older than the definition)
 * and then its argument schema, the job's first user code: the caller gates it (job-runner.ts).
 */
export async function dispatchJob(
  jobs: ReadonlyMap<string, Definition>,
  job: ClaimedJob,
): Promise<Dispatch> {
  const definition = jobs.get(job.name);
  if (!definition || !checksArguments(definition, job)) return dispatchUnchecked(jobs, job);
  if (job.version > definition.version) {
    return {
      kind: "fail",
      definition,
      error: new SoniqError(
        "INVALID_STATE",
        `job ${job.name} has version ${job.version}; this worker's definition has version ${definition.version}`,
      ),
    };
  }
  let args: unknown;
  try {
    args = JSON.parse(job.args);
  } catch (err) {
    return invalidArgs(err);
  }
  if (job.version < definition.version && definition.upgrade) {
    try {
      args = await definition.upgrade(args, job.version);
    } catch (err) {
      return { kind: "fail", definition, error: err };
    }
  }
  if (definition.argsSchema) {
    try {
      const checked = await validateArgs(definition.argsSchema, args);
      if (!checked.ok) throw new SoniqError("INVALID_ARGS", checked.message);
      args = checked.value;
    } catch (err) {
      return invalidArgs(err);
    }
  }
  return { kind: "run", definition, args };
}

/**
 * {@link dispatchJob} for a job whose definition has no argument schema and the job's version (or
 * that has no definition): no await, so the common case costs no promise.
 */
export function dispatchUnchecked(
  jobs: ReadonlyMap<string, Definition>,
  job: ClaimedJob,
): Dispatch {
  const definition = jobs.get(job.name);
  if (!definition) {
    return {
      kind: "dead_letter",
      reason: "unknown_job",
      error: `no handler registered for job name ${job.name}`,
    };
  }
  try {
    return { kind: "run", definition, args: JSON.parse(job.args) };
  } catch (err) {
    return invalidArgs(err);
  }
}

/** Arguments that do not parse, or that the schema rejects: dead-lettered `invalid_args`. */
function invalidArgs(err: unknown): Dispatch {
  return {
    kind: "dead_letter",
    reason: "invalid_args",
    error: `invalid arguments: ${errorText(err)}`,
    detail: errorText(err, 500),
  };
}
