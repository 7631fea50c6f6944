// The pure machine decides (docs/shutdown.md, its opening and the precedence rule): both executors
// take every shutdown instant from the ShutdownMachine. The machine's FORCE_TIMEOUT_PATH transition
// is withheld or given here by the test (standing in for the drain), on fake timers: an executor
// with a shutdown timer of its own would abort at the wall-clock deadline, not when the machine
// says.
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ClaimedJob } from "../../src/backends/contract/index.js";
import { Soniq } from "../../src/index.js";
import { JobTimeoutError, ShutdownTimeoutError } from "../../src/jobs/context.js";
import { STOP_FLAG } from "../../src/jobs/thread-context.js";
import { type InFlight, InFlightTable, type Outcome } from "../../src/worker/in-flight.js";
import { Permits } from "../../src/worker/permits.js";
import { runAsyncHandler } from "../../src/worker/run-async-handler.js";
import { runSyncHandler, type ThreadRunner } from "../../src/worker/run-sync-handler.js";
import { ShutdownMachine } from "../../src/worker/shutdown-machine.js";
import type { ThreadPool } from "../../src/worker/thread-pool.js";
import type { ThreadOutcome, ThreadTask } from "../../src/worker/thread-task.js";
import { memoryBackend } from "../helpers/test-backends.js";

const log = pino({ level: "silent" });
const soniq = new Soniq({ backend: await memoryBackend(), logger: log, env: {} });

function claimed(name: string): ClaimedJob {
  const now = new Date();
  return {
    id: `job-${Math.random().toString(16).slice(2)}`,
    name,
    queue: "default",
    args: "{}",
    priority: 0,
    attempts: 0,
    maxAttempts: 5,
    interruptions: 0,
    unchargedRecoveries: 0,
    createdAt: now,
    scheduledAt: now,
    workerId: "w1",
    claimToken: "t1",
    meta: null,
    traceContext: null,
    version: 1,
  };
}

function entryFor(job: ClaimedJob): InFlight {
  let entry: InFlight | undefined;
  new InFlightTable(() => undefined).track(
    job,
    async (e) => {
      entry = e;
    },
    async () => undefined,
  );
  return entry as InFlight;
}

/** Resolves the executor's outcome into a box the test can read synchronously. */
function watch(promise: Promise<Outcome>): { outcome?: Outcome } {
  const box: { outcome?: Outcome } = {};
  void promise.then((o) => {
    box.outcome = o;
  });
  return box;
}

const hang = soniq.job({
  name: "deadline.hang",
  timeout: 10,
  handler: (_args: unknown, ctx) =>
    new Promise((_resolve, reject) => {
      ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
    }),
});
const hangShortTimeout = soniq.job({
  name: "deadline.hang_short",
  timeout: 5,
  handler: () => new Promise(() => undefined),
});
const syncJob = soniq.syncJob({
  name: "deadline.sync",
  timeout: 5,
  handlerModule: new URL("../fixtures/thread-handlers.mjs", import.meta.url),
});

describe("executors take their deadlines from the ShutdownMachine", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("async executor › machine forced later than the wall-clock deadline › aborts and NACKs only when the machine says", async () => {
    const machine = new ShutdownMachine(3, Date.now);
    const entry = entryFor(claimed(hang.name));
    const box = watch(runAsyncHandler(entry, hang, {}, log, "w1", 0.5, machine));
    await vi.advanceTimersByTimeAsync(1000);
    machine.requestStop("SIGTERM"); // deadline at 4 s
    await vi.advanceTimersByTimeAsync(5900); // t = 6.9 s: past the deadline, machine not yet forced
    expect(entry.controller.signal.aborted).toBe(false);
    expect(box.outcome).toBeUndefined();
    expect(machine.checkDeadline()).toBe(true); // t = 6.9 s: the machine says FORCE_TIMEOUT_PATH
    expect(entry.controller.signal.reason).toBeInstanceOf(ShutdownTimeoutError);
    await vi.advanceTimersByTimeAsync(0);
    // The handler rejected on abort: released at once, never a failure.
    expect(box.outcome).toEqual({ kind: "released" });
  });

  it("async executor › handler ignores its signal › NACK'd at the machine's FORCE_TIMEOUT_PATH instant + settle", async () => {
    const machine = new ShutdownMachine(3, Date.now);
    const entry = entryFor(claimed(hangShortTimeout.name));
    const box = watch(runAsyncHandler(entry, hangShortTimeout, {}, log, "w1", 0.5, machine));
    await vi.advanceTimersByTimeAsync(1000);
    machine.requestStop("SIGTERM"); // deadline 4 s < job deadline 5 s: shutdown comes first
    await vi.advanceTimersByTimeAsync(5000); // t = 6 s: past both; the machine is not forced yet
    expect(box.outcome).toBeUndefined(); // no job_timeout: the machine said shutdown comes first
    machine.checkDeadline();
    await vi.advanceTimersByTimeAsync(499);
    expect(box.outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(box.outcome).toEqual({ kind: "released" });
  });

  it("async executor › job_timeout before the machine's deadline › a timeout at the job deadline", async () => {
    const machine = new ShutdownMachine(30, Date.now);
    const entry = entryFor(claimed(hangShortTimeout.name));
    const box = watch(runAsyncHandler(entry, hangShortTimeout, {}, log, "w1", 0.5, machine));
    machine.requestStop("SIGTERM"); // deadline 30 s > job deadline 5 s
    await vi.advanceTimersByTimeAsync(4999);
    expect(box.outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(box.outcome?.kind).toBe("timeout");
    expect(entry.controller.signal.reason).toBeInstanceOf(JobTimeoutError);
  });

  it("sync executor › waiting for a permit › released exactly when the machine is forced", async () => {
    const machine = new ShutdownMachine(1, Date.now);
    const permits = new Permits(0);
    const host: ThreadRunner = {
      workerId: "w1",
      permits,
      pool: () => {
        throw new Error("no thread may start");
      },
      threadStarted: () => undefined,
      threadEnded: () => undefined,
    };
    const box = watch(
      runSyncHandler(entryFor(claimed(syncJob.name)), syncJob, {}, log, host, machine),
    );
    machine.requestStop("SIGTERM");
    await vi.advanceTimersByTimeAsync(5000); // far past the deadline, machine not forced
    expect(box.outcome).toBeUndefined();
    machine.checkDeadline();
    await vi.advanceTimersByTimeAsync(0);
    expect(box.outcome).toEqual({ kind: "released" });
  });

  it("sync executor › running thread › stop flag raised exactly when the machine is forced; never released", async () => {
    const machine = new ShutdownMachine(2, Date.now);
    let task: ThreadTask | undefined;
    let finish: (o: ThreadOutcome) => void = () => undefined;
    const pool = {
      run: (t: ThreadTask) => {
        task = t;
        return new Promise<ThreadOutcome>((resolve) => {
          finish = resolve;
        });
      },
    } as unknown as ThreadPool;
    const host: ThreadRunner = {
      workerId: "w1",
      permits: new Permits(1),
      pool: () => pool,
      threadStarted: () => undefined,
      threadEnded: () => undefined,
    };
    const box = watch(
      runSyncHandler(entryFor(claimed(syncJob.name)), syncJob, {}, log, host, machine),
    );
    await vi.advanceTimersByTimeAsync(0);
    const flag = new Int32Array(task?.stopFlag as SharedArrayBuffer);
    machine.requestStop("SIGTERM"); // deadline 2 s < job deadline 5 s
    await vi.advanceTimersByTimeAsync(6000); // past both; the machine is not forced yet
    expect(Atomics.load(flag, 0)).toBe(STOP_FLAG.none); // no job_timeout, no own shutdown timer
    expect(box.outcome).toBeUndefined();
    machine.checkDeadline();
    expect(Atomics.load(flag, 0)).toBe(STOP_FLAG.shutdown_timeout);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(box.outcome).toBeUndefined(); // the sync branch waits for the thread
    finish({ kind: "value", value: 1 } satisfies ThreadOutcome);
    await vi.advanceTimersByTimeAsync(0);
    expect(box.outcome?.kind).toBe("success");
  });

  it("sync executor › job_timeout before the machine's deadline › a timeout at the job deadline", async () => {
    const machine = new ShutdownMachine(30, Date.now);
    const pool = { run: () => new Promise(() => undefined) } as unknown as ThreadPool;
    const host: ThreadRunner = {
      workerId: "w1",
      permits: new Permits(1),
      pool: () => pool,
      threadStarted: () => undefined,
      threadEnded: () => undefined,
    };
    const box = watch(
      runSyncHandler(entryFor(claimed(syncJob.name)), syncJob, {}, log, host, machine),
    );
    await vi.advanceTimersByTimeAsync(0);
    machine.requestStop("SIGTERM");
    await vi.advanceTimersByTimeAsync(4999);
    expect(box.outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(box.outcome?.kind).toBe("timeout");
  });
});
