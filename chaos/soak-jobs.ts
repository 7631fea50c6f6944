/**
 * The soak's worker module: `node dist/cli/main.js worker chaos/soak-jobs.ts`, its database and
 * retention from the SONIQ_* variables chaos/soak.ts sets. A mix of the job kinds an app runs:
 *
 * - `soak.async` — an async handler that waits `ms` (milliseconds);
 * - `soak.sync` — a sync handler on a worker thread (chaos/soak-digest.ts) hashing a buffer;
 * - `soak.flaky` — fails its first attempt; a `doomed` one fails every attempt (dead-lettered);
 * - `soak.snooze` — snoozes its first attempt for `snoozeSeconds`, then succeeds;
 * - `soak.remote` — a remote job against the test provider at `SOAK_PROVIDER_URL`, with
 *   `reconcile` (a submission of unknown outcome is looked up, not left frozen);
 * - the schedule `soak.tick`, every 5 s, runs `soak.async`.
 *
 * Every run appends a line to the run log `SOAK_RUN_LOG` (chaos/soak-log.ts): its start (with the
 * wait from due to start) and its end, so the soak can count runs per job and pick-up latency
 * without reading rows that retention has already forgotten.
 */
import { accepted, done, failed, notSubmitted, pending, Soniq, snooze } from "soniq";
import { appendRun, type SoakArgs } from "./soak-log.js";

export const soniq = new Soniq();

const wait = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** Milliseconds from when the run was due (`scheduledAt`, database clock) to now, its start. */
const waitedMs = (ctx: { scheduledAt: Date }) => Date.now() - ctx.scheduledAt.getTime();

export const asyncJob = soniq.job<SoakArgs>({
  name: "soak.async",
  handler: async (args, ctx) => {
    appendRun({ id: ctx.jobId, kind: "start", waitMs: waitedMs(ctx) });
    await wait(args.ms ?? 5, ctx.signal);
    appendRun({ id: ctx.jobId, kind: "completed" });
  },
});

export const syncJob = soniq.syncJob<SoakArgs>({
  name: "soak.sync",
  handlerModule: new URL("./soak-digest.ts", import.meta.url),
  timeout: 30,
});

export const flakyJob = soniq.job<SoakArgs>({
  name: "soak.flaky",
  maxAttempts: 2,
  retry: { kind: "fixed", delay: 0.5 },
  handler: async (args, ctx) => {
    appendRun({ id: ctx.jobId, kind: "start", waitMs: waitedMs(ctx) });
    if (args.doomed || ctx.attempt === 1) {
      appendRun({ id: ctx.jobId, kind: "failed" });
      throw new Error(`soak: ${args.doomed ? "a doomed job" : "a first attempt"} fails on purpose`);
    }
    appendRun({ id: ctx.jobId, kind: "completed" });
  },
});

export const snoozeJob = soniq.job<SoakArgs>({
  name: "soak.snooze",
  handler: async (args, ctx) => {
    // The first run snoozes (no attempt spent); the run after the snooze (due later than the job
    // was made) completes.
    const first = ctx.scheduledAt.getTime() - ctx.createdAt.getTime() < 500;
    appendRun({ id: ctx.jobId, kind: "start", waitMs: waitedMs(ctx) });
    if (first) {
      appendRun({ id: ctx.jobId, kind: "snoozed" });
      return snooze(args.snoozeSeconds ?? 1);
    }
    appendRun({ id: ctx.jobId, kind: "completed" });
  },
});

const provider = process.env.SOAK_PROVIDER_URL ?? "http://127.0.0.1:9";

export const remoteJob = soniq.remoteJob<SoakArgs>({
  name: "soak.remote",
  maxAttempts: 3,
  submitTimeout: 5,
  pollEvery: 0.3,
  pollTimeout: 120,
  submit: async (_args, ctx) => {
    appendRun({ id: ctx.jobId, kind: "start", waitMs: waitedMs(ctx) });
    const res = await fetch(`${provider}/tasks`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": ctx.idempotencyKey },
      body: JSON.stringify({ behaviour: "succeed" }),
      signal: ctx.signal,
    });
    const answer = (await res.json()) as { task_id?: string; error?: string };
    if (res.status === 202 && answer.task_id) return accepted(answer.task_id);
    return failed(answer.error ?? `HTTP ${res.status}`, { retry: res.status >= 500 });
  },
  // A submission whose outcome is unknown (its POST timed out on a loaded machine) is looked up
  // by its idempotency key instead of waiting frozen for an operator.
  reconcile: async (_args, ctx) => {
    const res = await fetch(
      `${provider}/tasks?idempotency_key=${encodeURIComponent(ctx.idempotencyKey)}`,
      { signal: ctx.signal },
    );
    if (res.status === 404) return notSubmitted();
    return accepted(((await res.json()) as { task_id: string }).task_id);
  },
  poll: async (taskId, ctx) => {
    const res = await fetch(`${provider}/tasks/${encodeURIComponent(taskId)}`, {
      signal: ctx.signal,
    });
    const task = (await res.json()) as { status: string; output?: unknown };
    if (task.status === "processing") return pending();
    if (task.status === "succeeded") {
      appendRun({ id: ctx.jobId, kind: "completed" });
      return done(task.output ?? null);
    }
    return failed(`task ${task.status}`, { retry: false });
  },
});

soniq.schedule({
  id: "soak.tick",
  job: asyncJob,
  every: 5,
  args: { ms: 5 },
});

export default soniq;
