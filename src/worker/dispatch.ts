/**
 * What a claimed job turns into before it runs: run it with its parsed (and, with a schema,
 * validated) arguments, or dead-letter it (no handler registered, or arguments that do not parse
 * or that its schema rejects).
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
  | { kind: "run"; definition: Definition; args: unknown };

/**
 * Decides what to do with a claimed job: run it, or dead-letter it (unknown job, bad args). Runs
 * the argument schema, the job's first user code: the caller gates it (job-runner.ts).
 */
export async function dispatchJob(
  jobs: ReadonlyMap<string, Definition>,
  job: ClaimedJob,
): Promise<Dispatch> {
  const definition = jobs.get(job.name);
  if (!definition?.argsSchema) return dispatchUnchecked(jobs, job);
  try {
    let args: unknown = JSON.parse(job.args);
    if (definition.argsSchema) {
      const checked = await validateArgs(definition.argsSchema, args);
      if (!checked.ok) throw new SoniqError("INVALID_ARGS", checked.message);
      args = checked.value;
    }
    return { kind: "run", definition, args };
  } catch (err) {
    return {
      kind: "dead_letter",
      reason: "invalid_args",
      error: `invalid arguments: ${errorText(err)}`,
      detail: errorText(err, 500),
    };
  }
}

/**
 * {@link dispatchJob} for a job whose definition has no argument schema (or that has none): no
 * await, so the common case costs no promise.
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
    return {
      kind: "dead_letter",
      reason: "invalid_args",
      error: `invalid arguments: ${errorText(err)}`,
      detail: errorText(err, 500),
    };
  }
}
