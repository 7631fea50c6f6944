/**
 * The chaos worker module: `node dist/cli/main.js worker chaos/jobs.ts`, settings from the
 * SONIQ_* variables chaos/run.ts sets. One job, `chaos.work`: it records the start of every run
 * in the run log (chaos/runlog.ts), sleeps `ms` (stopping early when its signal is aborted),
 * records the end, and returns. A `flaky` job throws on its first attempt, on purpose; a `poison`
 * job SIGKILLs its own worker each time it runs; a `floating` one leaves a rejected promise
 * unhandled and must not take its worker down. A `walk` job processes items with a checkpoint
 * every few (each item and each resolved checkpoint recorded in the run log); a `steps` job runs
 * durable steps with one effect (recorded), reconciled or frozen for the operator step
 * (docs/checkpoints.md). `chaos.limited` runs the same handler under a per-key concurrency limit
 * and a rate limit (docs/flow-control.md), its key in `flow.key`.
 *
 * Flows and batches: chaos/flows.ts registers their jobs (`chaos.flow_*`).
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
import { registerFlowJobs } from "./flows.js";
import { LIMITED_FLOW, LIMITED_JOB, type WorkArgs } from "./plan.js";
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

type Ctx = Parameters<Parameters<typeof soniq.job<WorkArgs, { n: number }>>[0]["handler"]>[1];

/**
 * A walker: items from `ctx.resume.next` on, each recorded (the record is the work), a checkpoint
 * every `every` items recorded once it resolved. A checkpoint that fails on a database error is
 * tried again; a refused one (`CLAIM_LOST`) aborts the signal and ends the run.
 */
async function walk(spec: NonNullable<WorkArgs["walk"]>, runId: string, ctx: Ctx): Promise<void> {
  let next = (ctx.resume as { next?: number } | undefined)?.next ?? 0;
  while (next < spec.items) {
    await sleep(spec.itemMs, ctx.signal);
    const item = next;
    await durably(() => runLog().item(ctx.jobId, runId, item), ctx.signal);
    next += 1;
    if (next % spec.every === 0 || next === spec.items) {
      const upto = next;
      await durably(() => ctx.checkpoint({ next: upto }), ctx.signal);
      await durably(() => runLog().checkpointed(ctx.jobId, runId, upto), ctx.signal);
    }
  }
}

/**
 * Steps `prepare`, `charge` (effect) and `finish`. The charge records its effect first, then takes
 * `effectMs` without looking at the signal: once applied, an effect must not throw (a throw says
 * "it did not happen" and would run it again), so a stop meanwhile leaves it running: frozen, or
 * reconciled from the record.
 */
async function stepped(
  spec: NonNullable<WorkArgs["steps"]>,
  runId: string,
  ctx: Ctx,
): Promise<void> {
  await ctx.step("prepare", () => ({ at: Date.now() }));
  await ctx.step(
    "charge",
    async () => {
      // No signal: an insert that may have landed is retried until it surely has (never a throw
      // after the effect may have happened).
      await durably(() => runLog().effect(ctx.jobId, runId));
      await pause(spec.effectMs);
      return { runId };
    },
    {
      effect: true,
      ...(spec.reconcile
        ? {
            reconcile: async () => {
              const applied = await runLog().effectOf(ctx.jobId);
              return applied === null ? { rerun: true as const } : { done: { runId: applied } };
            },
          }
        : {}),
    },
  );
  await ctx.step("finish", () => ({ at: Date.now() }));
}

/** A run of `chaos.work` or `chaos.limited`: recorded in the run log, then the work. */
async function runWork(args: WorkArgs, ctx: Ctx): Promise<{ n: number }> {
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
    if (args.walk) await walk(args.walk, runId, ctx);
    else if (args.steps) await stepped(args.steps, runId, ctx);
    else await sleep(args.ms, ctx.signal);
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
}

export const work = soniq.job<WorkArgs, { n: number }>({
  name: "chaos.work",
  maxAttempts: 5,
  retry: { kind: "fixed", delay: 0.2 },
  handler: runWork,
});

/** Flow-limited chaos jobs (docs/flow-control.md): one key per `flow.key`, both limits on it. */
export const limited = soniq.job<WorkArgs, { n: number }>({
  name: LIMITED_JOB,
  maxAttempts: 5,
  retry: { kind: "fixed", delay: 0.2 },
  ...LIMITED_FLOW,
  handler: runWork,
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

// Flows and batches (chaos/flows.ts).
registerFlowJobs(soniq);

export default soniq;
