/**
 * Start-up check of sync handlers: loads every thread-handler module on a worker thread, as it
 * will run, and checks its export, before the worker claims anything. A module that fails to load
 * (a syntax error, a missing import, a missing export) stops the start with one message naming the
 * job, the file, the line and the cause, instead of every job burning its attempts.
 */
import { SoniqError } from "../errors.js";
import type { JobDefinition } from "../jobs/job-definition.js";
import { ThreadPool } from "./thread-pool.js";

/**
 * Checks the handler modules of the sync jobs among `definitions` on a throw-away one-thread pool.
 * Does nothing (and starts no thread) when there is no sync job.
 * @param definitions - the registered jobs.
 * @throws SoniqError `WORKER_START` naming each job whose module fails to load, with its
 *   `FILE:LINE:COL: Name: message` (and what to change for a CommonJS / ES-module mismatch).
 */
export async function checkThreadHandlers(
  definitions: Iterable<JobDefinition<unknown, unknown, unknown>>,
): Promise<void> {
  const modules = new Map<string, { module: string; exportName: string; jobs: string[] }>();
  for (const definition of definitions) {
    if (definition.kind !== "sync" || definition.handlerModule === undefined) continue;
    const key = `${definition.handlerModule}#${definition.exportName}`;
    const entry = modules.get(key) ?? {
      module: definition.handlerModule,
      exportName: definition.exportName,
      jobs: [],
    };
    entry.jobs.push(definition.name);
    modules.set(key, entry);
  }
  if (modules.size === 0) return;
  const pool = new ThreadPool(1);
  const problems: string[] = [];
  try {
    for (const { module, exportName, jobs } of modules.values()) {
      const outcome = await pool.run({ kind: "check", module, exportName });
      if (outcome.kind !== "error") continue;
      // The runner's message already names file, line and cause ("MODULE_LOAD: could not load …").
      const message = outcome.error.message.replace(/^MODULE_LOAD: /, "");
      problems.push(`job ${jobs.join(", ")}: thread handler ${message}`);
    }
  } finally {
    await pool.destroy();
  }
  if (problems.length > 0) {
    throw new SoniqError(
      "WORKER_START",
      `${problems.join("; ")}. Fix the module; no job was claimed.`,
    );
  }
}
