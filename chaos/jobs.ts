/**
 * The chaos worker module: `node dist/cli/main.js worker chaos/jobs.ts`, settings from the
 * SONIQ_* variables chaos/run.ts sets. One job, `chaos.work`: it records the start of every run
 * in the run log (chaos/runlog.ts), sleeps `ms` (stopping early when its signal is aborted),
 * records the end, and returns. A `flaky` job throws on its first attempt, on purpose; a `poison`
 * job SIGKILLs its own worker each time it runs; a `floating` one leaves a rejected promise
 * unhandled and must not take its worker down.
 *
 * Two remote jobs (chaos/remote-workload.ts) call the test provider at `CHAOS_PROVIDER_URL`:
 * `chaos.remote` with `reconcile` (it looks the task up by idempotency key) and
 * `chaos.remote_manual` without (its frozen jobs wait for the harness's operator step).
 *
 * Run-log writes are retried until they land, so a PostgreSQL restart never turns into a job
 * failure of the harness's own making. The end of a run that did its work is recorded even when
 * the shutdown deadline aborts the signal meanwhile: "completed" means the work happened.
 */
import { randomUUID } from "node:crypto";
import { accepted, done, failed, notSubmitted, pending, Soniq } from "soniq";
import type { WorkArgs } from "./plan.js";
import { REMOTE_JOB, REMOTE_MANUAL_JOB, type RemoteArgs } from "./remote-workload.js";
import { openRunLogWriter, type RunLogWriter, targetFromEnv } from "./runlog.js";

export const soniq = new Soniq();

let writer: RunLogWriter | undefined;
const runLog = (): RunLogWriter => {
  writer ??= openRunLogWriter(targetFromEnv());
  return writer;
};

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retries `write` with a backoff up to 1 s; gives up only when `signal` (if given) is aborted. */
async function durably(write: () => Promise<void>, signal?: AbortSignal): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await write();
      return;
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      await pause(Math.min(1000, 50 * 2 ** i));
    }
  }
}

/** Sleeps `ms`; rejects with the signal's reason as soon as it is aborted. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export const work = soniq.job<WorkArgs, { n: number }>({
  name: "chaos.work",
  maxAttempts: 5,
  retry: { kind: "fixed", delay: 0.2 },
  handler: async (args, ctx) => {
    const runId = randomUUID();
    const startedAt = Date.now();
    await durably(
      () =>
        runLog().start({
          runId,
          jobId: ctx.jobId,
          n: args.n,
          workerId: ctx.workerId,
          pid: process.pid,
          attempt: ctx.attempt,
          startedAt,
        }),
      ctx.signal,
    );
    // The poison job kills its own worker at every run (crash accounting must end it in the DLQ
    // without charging its neighbours); the floating one leaves a rejection nobody handles.
    if (args.poison) process.kill(process.pid, "SIGKILL");
    if (args.floating) Promise.reject(new Error(`chaos: a floating rejection (job n=${args.n})`));
    try {
      await sleep(args.ms, ctx.signal);
    } catch (err) {
      // Aborted at the shutdown deadline: the work did not happen; the row will be NACK'd.
      await runLog()
        .end(runId, "aborted", Date.now())
        .catch(() => undefined);
      throw err;
    }
    const endedAt = Date.now();
    if (args.flaky && ctx.attempt === 1) {
      await durably(() => runLog().end(runId, "failed", endedAt));
      throw new Error("chaos: a flaky job fails its first attempt on purpose");
    }
    await durably(() => runLog().end(runId, "completed", endedAt));
    return { n: args.n };
  },
});

const provider = process.env.CHAOS_PROVIDER_URL ?? "http://127.0.0.1:9";

/** What both remote jobs share: submit, poll and their timings (seconds). */
const remoteBase = {
  queue: "remote",
  maxAttempts: 3,
  submitTimeout: 5,
  pollEvery: 0.3,
  pollTimeout: 300,
  submit: async (args: RemoteArgs, ctx: { idempotencyKey: string; signal: AbortSignal }) => {
    const res = await fetch(`${provider}/tasks`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": ctx.idempotencyKey },
      body: JSON.stringify({ behaviour: args.behaviour }),
      signal: ctx.signal,
    });
    const answer = (await res.json()) as { task_id?: string; error?: string };
    if (res.status === 202 && answer.task_id) return accepted(answer.task_id);
    return failed(answer.error ?? `HTTP ${res.status}`, { retry: res.status >= 500 });
  },
  poll: async (taskId: string, ctx: { signal: AbortSignal }) => {
    const res = await fetch(`${provider}/tasks/${encodeURIComponent(taskId)}`, {
      signal: ctx.signal,
    });
    const task = (await res.json()) as { status: string; output?: unknown };
    if (task.status === "processing") return pending();
    if (task.status === "succeeded") return done(task.output ?? null);
    return failed(`task ${task.status}`, { retry: false });
  },
};

export const remote = soniq.remoteJob({
  ...remoteBase,
  name: REMOTE_JOB,
  reconcile: async (_args: RemoteArgs, ctx) => {
    const res = await fetch(
      `${provider}/tasks?idempotency_key=${encodeURIComponent(ctx.idempotencyKey)}`,
      { signal: ctx.signal },
    );
    if (res.status === 404) return notSubmitted();
    return accepted(((await res.json()) as { task_id: string }).task_id);
  },
});

export const remoteManual = soniq.remoteJob({ ...remoteBase, name: REMOTE_MANUAL_JOB });

export default soniq;
