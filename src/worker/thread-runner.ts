/**
 * Runs on a worker thread of the sync-handler pool (piscina loads this file). Imports the job's
 * handler module once per thread, calls it with the arguments and a ThreadJobContext, and returns
 * its value, a snooze, or what it threw as a record that keeps name, message and stack. A "check"
 * task only loads the module and checks its export (the worker does this at start-up).
 */
import { fileURLToPath } from "node:url";
import { SoniqError } from "../errors.js";
import { importUserModule } from "../jobs/import-user-module.js";
import { checkProgress, writeProgress } from "../jobs/progress.js";
import { RateLimited, rateLimited } from "../jobs/rate-limited.js";
import { Snooze } from "../jobs/snooze.js";
import { checkpointFromThread } from "../jobs/thread-checkpoint.js";
import { STOP_FLAG, type StopReason, type ThreadJobContext } from "../jobs/thread-context.js";
import { dependenciesFromThread } from "../jobs/thread-dependencies.js";
import { toThreadErrorRecord } from "./thread-error.js";
import type { ThreadCheck, ThreadOutcome, ThreadTask } from "./thread-task.js";

type Handler = (args: unknown, ctx: ThreadJobContext) => unknown;

const handlers = new Map<string, Promise<Handler>>();

async function load(module: string, exportName: string): Promise<Handler> {
  const mod = await importUserModule(module);
  const fn = mod[exportName];
  if (typeof fn !== "function") {
    const found = Object.keys(mod).filter((k) => typeof mod[k] === "function");
    throw new SoniqError(
      "MODULE_LOAD",
      `${fileURLToPath(module)} has no function export named ${exportName}${found.length > 0 ? ` (its function exports: ${found.join(", ")})` : ""}`,
    );
  }
  return fn as Handler;
}

function handlerFor(module: string, exportName: string): Promise<Handler> {
  const key = `${module}#${exportName}`;
  let handler = handlers.get(key);
  if (!handler) {
    handler = load(module, exportName);
    handlers.set(key, handler);
    handler.catch(() => handlers.delete(key));
  }
  return handler;
}

async function run(task: ThreadTask): Promise<ThreadOutcome> {
  const fn = await handlerFor(task.module, task.exportName);
  const flag = new Int32Array(task.stopFlag);
  const reason = (): StopReason | null => {
    const value = Atomics.load(flag, 0);
    if (value === STOP_FLAG.job_timeout) return "job_timeout";
    if (value === STOP_FLAG.shutdown_timeout) return "shutdown_timeout";
    if (value === STOP_FLAG.cancelled) return "cancelled";
    return null;
  };
  // Taken after its timeout was recorded or after a cancel (the thread was slow to start or to
  // load the module): the attempt is over, so the handler must not run beside its retry.
  const before = reason();
  if (before === "job_timeout" || before === "cancelled")
    return { kind: "not_started", reason: before };
  const ctx: ThreadJobContext = {
    ...task.ctx,
    createdAt: new Date(task.ctx.createdAt),
    scheduledAt: new Date(task.ctx.scheduledAt),
    stopRequested: () => reason() !== null,
    stopReason: reason,
    progress: (fraction, message) => writeProgress(task.progress, checkProgress(fraction, message)),
    rateLimited,
    checkpoint: (state) =>
      checkpointFromThread(task.ctx.workerId, {
        jobId: task.ctx.jobId,
        claimToken: task.claimToken,
        state,
      }),
    dependencies: () =>
      dependenciesFromThread(task.ctx.workerId, {
        jobId: task.ctx.jobId,
        claimToken: task.claimToken,
      }),
  };
  const value = await fn(task.args, ctx);
  if (value instanceof Snooze) return { kind: "snooze", seconds: value.seconds };
  if (value instanceof RateLimited) {
    return { kind: "snooze", seconds: value.retryAfterMs / 1000, scope: value.scope };
  }
  // The value crosses back by structured clone: one that cannot be cloned (a function, a class
  // with private state, a socket) is a failure of this run, said in words, not a thread error.
  try {
    structuredClone(value);
  } catch (err) {
    const error = new SoniqError(
      "INVALID_PAYLOAD",
      `the sync handler returned a value that cannot be sent back from its thread (${err instanceof Error || (typeof err === "object" && err !== null && "message" in err) ? String((err as { message: unknown }).message) : String(err)}); return plain JSON`,
    );
    // Every attempt would return it again: dead-lettered `invalid_result`, not retried.
    return { kind: "error", error: toThreadErrorRecord(error), invalidResult: true };
  }
  return { kind: "value", value };
}

export default async function runThreadTask(
  task: ThreadTask | ThreadCheck,
): Promise<ThreadOutcome> {
  try {
    if (task.kind === "check") {
      await handlerFor(task.module, task.exportName);
      return { kind: "value", value: null };
    }
    return await run(task);
  } catch (err) {
    return { kind: "error", error: toThreadErrorRecord(err) };
  }
}
