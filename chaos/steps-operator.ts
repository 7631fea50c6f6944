/**
 * The operator step for stepped chaos jobs frozen on their effect step (docs/checkpoints.md,
 * "Frozen jobs"), run by chaos/run.ts while it waits for the queue to drain: for each `chaos.work`
 * job frozen on `charge`, it looks the effect up in the run log (what an operator does in the
 * payment provider's dashboard) and answers `soniq.jobs.resolveStep`: `{ done }` when the effect
 * was applied, `{ rerun: true }` when it was not. A job that changed meanwhile is left for the
 * next pass.
 */
import { pino } from "pino";
import { Soniq } from "soniq";
import type { RunLogTarget, RunLogWriter } from "./runlog.js";
import { openRunLogWriter } from "./runlog.js";

/** What the operator answered so far. */
export interface StepsOperator {
  done: string[];
  rerun: string[];
  /** One pass: answers every frozen stepped job found now. */
  pass(): Promise<void>;
  close(): Promise<void>;
}

/** An operator on the store at `env` (the harness's SONIQ_* of it), reading `runLog`. */
export function stepsOperator(
  env: { SONIQ_DATABASE_URL?: string; SONIQ_SCHEMA?: string },
  runLog: RunLogTarget,
): StepsOperator {
  const soniq = new Soniq({
    databaseUrl: env.SONIQ_DATABASE_URL as string,
    ...(env.SONIQ_SCHEMA ? { schema: env.SONIQ_SCHEMA } : {}),
    env: {},
    logger: pino({ level: "silent" }),
    rejectUnknownJobs: false,
    poolSize: 2,
  });
  let log: RunLogWriter | undefined;
  const operator: StepsOperator = {
    done: [],
    rerun: [],
    async pass() {
      log ??= openRunLogWriter(runLog);
      const page = await soniq.jobs.list(
        { name: ["chaos.work"], status: ["scheduled", "queued"], error: "frozen" },
        { limit: 500 },
      );
      for (const job of page.jobs) {
        const shown = await soniq.jobs.get(job.id);
        if (!shown || !("steps" in shown)) continue;
        const frozen = shown.steps.find((s) => s.state === "frozen");
        if (!frozen) continue;
        const applied = await log.effectOf(job.id);
        try {
          if (applied === null) {
            await soniq.jobs.resolveStep(job.id, frozen.name, { rerun: true });
            operator.rerun.push(job.id);
          } else {
            await soniq.jobs.resolveStep(job.id, frozen.name, { done: { runId: applied } });
            operator.done.push(job.id);
          }
        } catch {
          // changed meanwhile (or the database is busy): the next pass sees it again
        }
      }
    },
    async close() {
      await soniq.close();
    },
  };
  return operator;
}
