/**
 * Runs on a worker thread of the sync-handler pool (piscina loads this file). Imports the job's
 * handler module once per thread, calls it with the arguments and a ThreadJobContext, and returns
 * its value (or a snooze). Errors propagate to the main thread as the rejection.
 */
import { SoniqError } from "../errors.js";
import { Snooze } from "../jobs/snooze.js";
import { STOP_FLAG, type StopReason, type ThreadJobContext } from "../jobs/thread-context.js";
import type { ThreadOutcome, ThreadTask } from "./thread-task.js";

type Handler = (args: unknown, ctx: ThreadJobContext) => unknown;

const handlers = new Map<string, Promise<Handler>>();
let tsxRegistered = false;

async function load(module: string, exportName: string): Promise<Handler> {
  if (/\.(m|c)?tsx?$/.test(module) && !tsxRegistered) {
    const { register } = await import("tsx/esm/api");
    register();
    tsxRegistered = true;
  }
  const mod = (await import(module)) as Record<string, unknown>;
  const fn = mod[exportName];
  if (typeof fn !== "function") {
    throw new SoniqError("MODULE_LOAD", `${module} has no function export named ${exportName}`);
  }
  return fn as Handler;
}

export default async function runThreadTask(task: ThreadTask): Promise<ThreadOutcome> {
  const key = `${task.module}#${task.exportName}`;
  let handler = handlers.get(key);
  if (!handler) {
    handler = load(task.module, task.exportName);
    handlers.set(key, handler);
    handler.catch(() => handlers.delete(key));
  }
  const fn = await handler;
  const flag = new Int32Array(task.stopFlag);
  const reason = (): StopReason | null => {
    const value = Atomics.load(flag, 0);
    if (value === STOP_FLAG.job_timeout) return "job_timeout";
    if (value === STOP_FLAG.shutdown_timeout) return "shutdown_timeout";
    return null;
  };
  const ctx: ThreadJobContext = {
    ...task.ctx,
    createdAt: new Date(task.ctx.createdAt),
    scheduledAt: new Date(task.ctx.scheduledAt),
    stopRequested: () => reason() !== null,
    stopReason: reason,
  };
  const value = await fn(task.args, ctx);
  if (value instanceof Snooze) return { kind: "snooze", seconds: value.seconds };
  return { kind: "value", value };
}
