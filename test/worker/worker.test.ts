import { pino } from "pino";
import { expect, it } from "vitest";
import { z } from "zod";
import { type JobContext, Soniq, snooze } from "../../src/index.js";
import { type BackendTarget, describeEachBackend } from "../helpers/backend-targets.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });

/** A Soniq instance with fast polling over a fresh store of `target`. */
async function open(target: BackendTarget, extra: Record<string, unknown> = {}) {
  const backend = await target.open();
  const soniq = new Soniq({
    backend,
    logger: silent,
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
    ...extra,
  });
  return { soniq, backend };
}

describeEachBackend("worker", (target) => {
  const instance = (extra: Record<string, unknown> = {}) => open(target, extra);

  it("runs jobs, stores results and passes a full context", async () => {
    const { soniq } = await instance();
    let seen: JobContext | undefined;
    const add = soniq.job({
      name: "math.add",
      queue: "math",
      handler: async (args: { a: number; b: number }, ctx) => {
        seen = ctx;
        return { sum: args.a + args.b };
      },
    });
    const id = await add.enqueue({ a: 2, b: 3 });
    const worker = soniq.worker();
    await worker.start();
    expect(worker.ready).toBe(true);
    const job = await waitFor(async () => {
      const j = await soniq.getJob(id);
      return j?.status === "done" ? j : null;
    });
    expect(job.result).toEqual({ sum: 5 });
    expect(job.attempts).toBe(1);
    expect(seen).toMatchObject({
      jobId: id,
      name: "math.add",
      attempt: 1,
      maxAttempts: 5,
      queue: "math",
      workerId: worker.id,
    });
    expect(seen?.signal).toBeInstanceOf(AbortSignal);
    expect(seen?.createdAt).toBeInstanceOf(Date);
    const exit = await worker.stop();
    expect(exit).toEqual({ reason: "drained", exitCode: 0, released: [] });
    expect(worker.ready).toBe(false);
    const rows = await soniq.workers();
    expect(rows[0]).toMatchObject({ id: worker.id, status: "stopped", live: false });
  });

  it("resultRetention per job definition › 0 keeps nothing (the job and its dedup key are gone when it finishes); others keep the instance's", async () => {
    const { soniq } = await instance();
    const ran: string[] = [];
    const ping = soniq.job({
      name: "ping.forget",
      resultRetention: 0,
      handler: async (args: { n: number }) => {
        ran.push(`ping ${args.n}`);
        return { pong: args.n };
      },
    });
    const kept = soniq.job({
      name: "ping.keep",
      handler: async () => "kept",
    });
    const gone = await ping.enqueue({ n: 1 }, { dedupKey: "ping-1" });
    const stays = await kept.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => ((await soniq.getJob(stays))?.status === "done" ? true : null));
    await waitFor(async () =>
      ran.length === 1 && (await soniq.getJob(gone)) === null ? true : null,
    );
    expect(await soniq.stats()).toMatchObject({ done: 1, total: 1 });
    // The key was released with the job: the same key enqueues a new job at once.
    const again = await ping.enqueue({ n: 2 }, { dedupKey: "ping-1" });
    expect(again).not.toBe(gone);
    await waitFor(async () => (ran.length === 2 ? true : null));
    await worker.stop();
    // A queued job cancelled by an operator follows its definition's retention too.
    const later = await ping.enqueue({ n: 3 }, { delay: 3600 });
    expect(await soniq.jobs.cancel(later)).toBe("cancelled");
    expect(await soniq.getJob(later)).toBeNull();
    const keptLater = await kept.enqueue({}, { delay: 3600 });
    expect(await soniq.jobs.cancel(keptLater)).toBe("cancelled");
    expect((await soniq.getJob(keptLater))?.status).toBe("cancelled");
    expect(() =>
      soniq.job({ name: "bad.retention", resultRetention: -1, handler: async () => 1 }),
    ).toThrow(/resultRetention must be a number of seconds >= 0/);
  });

  it("retries per policy, then moves the job to the DLQ with the reason and last error", async () => {
    const { soniq } = await instance();
    const errors: unknown[] = [];
    const flaky = soniq.job({
      name: "flaky.job",
      maxAttempts: 3,
      retry: (attempt, error) => {
        errors.push(error);
        return attempt * 0.01;
      },
      handler: async () => {
        throw new TypeError("always broken");
      },
    });
    const id = await flaky.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    const dead = await waitFor(() => soniq.getDeadLetter(id));
    await worker.stop();
    expect(dead).toMatchObject({ reason: "max_attempts_exceeded", attempts: 3 });
    expect(dead.lastError).toContain("TypeError: always broken");
    expect(errors).toHaveLength(2);
    expect(errors[0]).toBeInstanceOf(TypeError);
    expect(await soniq.getJob(id)).toBeNull();
    // Replay puts it back with attempts reset.
    await soniq.replay(id);
    expect(await soniq.getJob(id)).toMatchObject({ status: "queued", attempts: 0 });
  });

  it("invalid arguments go to the DLQ without spending an attempt; a name it has no definition for stays queued, untouched, until a definition exists", async () => {
    const { soniq, backend } = await instance();
    let ran = 0;
    soniq.job({ name: "strict.job", args: z.object({ n: z.number() }), handler: async () => "ok" });
    const producer = new Soniq({ backend, logger: silent, env: {}, rejectUnknownJobs: false });
    const worker = soniq.worker();
    await worker.start();
    // Enqueued while the worker runs: the claims pass over it (the hand-off at enqueue takes the
    // same rule: claim-loop.test.ts and hand-off-cases.ts).
    const unknownId = await producer.enqueue("nobody.handles", {});
    const badId = await producer.enqueue("strict.job", { n: "not a number" });
    const goodId = await producer.enqueue("strict.job", { n: 1 });
    const bad = await waitFor(() => soniq.getDeadLetter(badId));
    await waitFor(async () => (await soniq.getJob(goodId))?.status === "done");
    expect(bad).toMatchObject({ reason: "invalid_args", attempts: 0 });
    expect(bad.lastError).toContain("n");
    // Several claim cycles later (poll 50 ms), the unknown job is still queued and never claimed.
    await new Promise((r) => setTimeout(r, 300));
    expect(await soniq.getJob(unknownId)).toMatchObject({
      status: "queued",
      attempts: 0,
      workerId: null,
      startedAt: null,
    });
    expect(await soniq.getDeadLetter(unknownId)).toBeNull();
    // A definition added to the running worker's instance counts from its next claim.
    soniq.job({
      name: "nobody.handles",
      handler: async () => {
        ran += 1;
      },
    });
    await waitFor(async () => (await soniq.getJob(unknownId))?.status === "done");
    await worker.stop();
    expect(ran).toBe(1);
  });

  it("a job_timeout is a failure with an attempt counted and the signal aborted", async () => {
    const { soniq } = await instance();
    let reason: unknown;
    const slow = soniq.job({
      name: "slow.job",
      timeout: 0.1,
      maxAttempts: 1,
      handler: (_args: object, ctx) =>
        new Promise((_, reject) => {
          ctx.signal.addEventListener("abort", () => {
            reason = ctx.signal.reason;
            reject(ctx.signal.reason);
          });
        }),
    });
    const id = await slow.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    const dead = await waitFor(() => soniq.getDeadLetter(id));
    await worker.stop();
    expect(dead.attempts).toBe(1);
    expect(dead.lastError).toContain("JobTimeoutError");
    expect((reason as Error).name).toBe("JobTimeoutError");
  });

  it("ctx.signal read only after the job_timeout is already aborted; it stays assignable", async () => {
    const { soniq } = await instance();
    let late: { aborted: boolean; reason: unknown } | undefined;
    const lateReader = soniq.job({
      name: "late.reader",
      timeout: 0.05,
      maxAttempts: 1,
      handler: async (_args: object, ctx) => {
        await new Promise((r) => setTimeout(r, 150));
        late = { aborted: ctx.signal.aborted, reason: ctx.signal.reason };
        throw ctx.signal.reason;
      },
    });
    const own = new AbortController();
    let combined: AbortSignal | undefined;
    const assigner = soniq.job({
      name: "signal.assigner",
      handler: async (_args: object, ctx) => {
        ctx.signal = AbortSignal.any([ctx.signal, own.signal]);
        combined = ctx.signal;
        return "ok";
      },
    });
    const lateId = await lateReader.enqueue({});
    const assignerId = await assigner.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(() => soniq.getDeadLetter(lateId));
    await waitFor(() => late); // the handler reads its signal 150 ms in, after the 50 ms timeout
    await waitFor(async () => (await soniq.getJob(assignerId))?.status === "done");
    await worker.stop();
    expect(late?.aborted).toBe(true);
    expect((late?.reason as Error | undefined)?.name).toBe("JobTimeoutError");
    expect(combined?.aborted).toBe(false);
    own.abort();
    expect(combined?.aborted).toBe(true);
  });

  it("snooze runs the job again later without spending an attempt", async () => {
    const { soniq } = await instance();
    let runs = 0;
    const later = soniq.job({
      name: "later.job",
      handler: async (_args: object, ctx) => {
        runs += 1;
        return ctx.attempt === 1 && runs === 1 ? snooze(0.05) : "finally";
      },
    });
    const id = await later.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    const job = await waitFor(async () => {
      const j = await soniq.getJob(id);
      return j?.status === "done" ? j : null;
    });
    await worker.stop();
    expect(runs).toBe(2);
    expect(job).toMatchObject({ attempts: 1, result: "finally" });
  });

  it("a drain waits for in-flight jobs and records them done (exit 0)", async () => {
    const { soniq } = await instance({ shutdownTimeout: 10 });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const job = soniq.job({ name: "gated.job", handler: async () => gate.then(() => "finished") });
    const id = await job.enqueue({});
    const queuedId = await job.enqueue({}, { delay: 3600 });
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "processing");
    const stopping = worker.stop("SIGTERM");
    expect(worker.ready).toBe(false);
    expect(worker.state).toBe("DRAINING");
    setTimeout(release, 100);
    const exit = await stopping;
    expect(exit).toEqual({ reason: "drained", exitCode: 0, released: [] });
    expect(await soniq.getJob(id)).toMatchObject({
      status: "done",
      attempts: 1,
      result: "finished",
    });
    expect(await soniq.getJob(queuedId)).toMatchObject({ status: "queued" });
  });

  it("at shutdown_timeout aborts and NACKs: attempts and last_error unchanged (exit 1)", async () => {
    const { soniq } = await instance({ shutdownTimeout: 0.3, shutdownSettle: 0.2 });
    const honours = soniq.job({
      name: "honours.signal",
      handler: (_args: object, ctx) =>
        new Promise((_, reject) =>
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
        ),
    });
    // Ignores its signal and returns only when the test says, after stop() returned: a stop that
    // waited for it would never return (the proof does not rest on a timing bound).
    let lateFinish = false;
    let finishLate = () => {};
    const ignores = soniq.job({
      name: "ignores.signal",
      handler: () =>
        new Promise((resolve) => {
          finishLate = () => {
            lateFinish = true;
            resolve("too late");
          };
        }),
    });
    const a = await honours.enqueue({});
    const b = await ignores.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.stats()).processing === 2);
    const t0 = Date.now();
    const exit = await worker.stop("SIGTERM");
    const elapsed = Date.now() - t0;
    expect(exit.reason).toBe("shutdown_timeout");
    expect(exit.exitCode).toBe(1);
    expect(exit.released.sort()).toEqual([a, b].sort());
    expect(lateFinish).toBe(false);
    // Not before the deadline (0.3 s); bounded by deadline + settle + the NACK writes (0.5 s and
    // a few statements), far below the bound whatever the load.
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(15_000);
    for (const id of [a, b]) {
      expect(await soniq.getJob(id)).toMatchObject({
        status: "queued",
        attempts: 0,
        lastError: null,
        workerId: null,
      });
    }
    // The handler that ignored its signal finishes later; the fence discards its result.
    finishLate();
    await new Promise((r) => setTimeout(r, 50));
    expect(await soniq.getJob(b)).toMatchObject({ status: "queued", result: null });
  });

  it("a second stop does not move the deadline", async () => {
    const { soniq } = await instance({ shutdownTimeout: 2, shutdownSettle: 0.05 });
    const stuck = soniq.job({
      name: "stuck.job",
      handler: (_args: object, ctx) =>
        new Promise((_, reject) =>
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
        ),
    });
    await stuck.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.stats()).processing === 1);
    let deadlineAt = Number.NaN;
    let forcedAt = Number.NaN;
    soniq.events.on("drain_started", (e) => {
      deadlineAt = Date.parse(e.deadline_at);
    });
    soniq.events.on("force_timeout_path", () => {
      forcedAt = Date.now();
    });
    const first = worker.stop("SIGTERM");
    await new Promise((r) => setTimeout(r, 1000));
    const second = worker.stop("SIGTERM");
    const [e1, e2] = await Promise.all([first, second]);
    expect(e1).toBe(e2);
    expect(e1.reason).toBe("shutdown_timeout");
    // The deadline path began at the first stop's deadline (2 s after it), not 2 s after the
    // second (1 s later): measured by the deadline timer in this process alone, no database
    // write in between, with a second of slack for a late timer.
    expect(forcedAt).toBeGreaterThanOrEqual(deadlineAt - 5);
    expect(forcedAt - deadlineAt).toBeLessThan(1000);
  });

  it("job_timeout firing before the shutdown deadline is a failure; shutdown first is a NACK", async () => {
    const { soniq } = await instance({ shutdownTimeout: 0.5, shutdownSettle: 0.05 });
    const waitAbort = (_args: object, ctx: JobContext) =>
      new Promise((_, reject) =>
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
      );
    const short = soniq.job({
      name: "short.timeout",
      timeout: 0.15,
      maxAttempts: 3,
      retry: { kind: "fixed", delay: 3600 },
      handler: waitAbort,
    });
    const long = soniq.job({ name: "long.timeout", timeout: 30, handler: waitAbort });
    const s = await short.enqueue({});
    const l = await long.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    // The short job's timeout (0.15 s) records its failure while the long one runs. (Waiting for
    // both to be processing at once failed under load: a first read after 0.15 s never saw 2.)
    await waitFor(async () => {
      const [shortJob, longJob] = await Promise.all([soniq.getJob(s), soniq.getJob(l)]);
      return shortJob?.attempts === 1 && longJob?.status === "processing";
    });
    await worker.stop("SIGTERM");
    expect(await soniq.getJob(s)).toMatchObject({ status: "queued", attempts: 1 });
    expect((await soniq.getJob(s))?.lastError).toContain("JobTimeoutError");
    expect(await soniq.getJob(l)).toMatchObject({ status: "queued", attempts: 0, lastError: null });
  });

  it("refuses to start without registered jobs", async () => {
    const { soniq } = await instance();
    await expect(soniq.worker().start()).rejects.toMatchObject({ code: "WORKER_START" });
  });

  it("an AbortSignal stops an embedded worker", async () => {
    const { soniq } = await instance();
    soniq.job({ name: "noop.job", handler: async () => undefined });
    const controller = new AbortController();
    const worker = soniq.worker({ signal: controller.signal });
    await worker.start();
    controller.abort();
    await expect(worker.finished).resolves.toMatchObject({ reason: "drained", exitCode: 0 });
  });

  it("records a result that is not JSON as a failure", async () => {
    const { soniq } = await instance();
    const bad = soniq.job({
      name: "bad.result",
      maxAttempts: 1,
      handler: async () => ({ big: 10n }),
    });
    const id = await bad.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    const dead = await waitFor(() => soniq.getDeadLetter(id));
    await worker.stop();
    expect(dead.lastError).toContain("INVALID_PAYLOAD");
  });

  it("a stop that arrives while the worker is starting drains cleanly once it runs", async () => {
    const { soniq } = await instance();
    soniq.job({ name: "noop.job", handler: async () => undefined });
    const worker = soniq.worker();
    const starting = worker.start();
    const stopped = worker.stop("SIGTERM");
    await starting;
    await expect(stopped).resolves.toMatchObject({ reason: "drained", exitCode: 0 });
    expect((await soniq.workers())[0]).toMatchObject({ status: "stopped" });
  });

  it("a worker whose signal is already aborted starts nothing", async () => {
    const { soniq } = await instance();
    soniq.job({ name: "noop.job", handler: async () => undefined });
    const worker = soniq.worker({ signal: AbortSignal.abort() });
    await worker.start();
    await expect(worker.finished).resolves.toMatchObject({ reason: "drained", exitCode: 0 });
    expect(await soniq.workers()).toHaveLength(0);
  });

  it("a failed start resolves finished with start_failed (exit code 2) and emits no event (docs/events.md)", async () => {
    const { soniq, backend } = await instance();
    soniq.job({ name: "noop.job", handler: async () => undefined });
    const seen: string[] = [];
    soniq.events.onAny((name, _payload) => void seen.push(name));
    await backend.close();
    const worker = soniq.worker();
    await expect(worker.start()).rejects.toMatchObject({ code: "CLOSED" });
    await expect(worker.finished).resolves.toMatchObject({ reason: "start_failed", exitCode: 2 });
    expect(seen).toEqual([]); // no worker_started, no worker_stopped
  });

  it("validates worker options like instance options", async () => {
    const { soniq } = await instance();
    expect(() => soniq.worker({ concurrency: 0 })).toThrow(/INVALID_OPTION.*concurrency/);
    expect(() => soniq.worker({ shutdownTimeout: -1 })).toThrow(/INVALID_OPTION/);
    // @ts-expect-error unknown option
    expect(() => soniq.worker({ concurency: 2 })).toThrow(/INVALID_OPTION.*concurency/);
  });

  it("a handler throwing an unprintable value is still recorded (never left processing)", async () => {
    const { soniq } = await instance();
    const nasty = soniq.job({
      name: "throws.unprintable",
      maxAttempts: 1,
      handler: async () => {
        throw Object.assign(Object.create(null), { code: "E_PROVIDER", status: 502n });
      },
    });
    const id = await nasty.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    const dead = await waitFor(() => soniq.getDeadLetter(id));
    await expect(worker.stop()).resolves.toMatchObject({ exitCode: 0 });
    expect(dead).toMatchObject({ attempts: 1, reason: "max_attempts_exceeded" });
    expect(dead.lastError).toContain("non-Error thrown (object)");
  });

  it("a stop at any moment of start-up drains exactly once", async () => {
    for (const delay of [0, 1, 5, 20]) {
      const events: string[] = [];
      const { soniq } = await instance({
        metrics: { emit: (name: string) => void events.push(name) },
      });
      soniq.job({ name: "noop.job", handler: async () => undefined });
      const worker = soniq.worker();
      const starting = worker.start();
      await new Promise((r) => setTimeout(r, delay));
      const exit = await worker.stop("SIGTERM");
      await starting;
      expect(exit.exitCode).toBe(0);
      // start() was called first, so the worker did start: exactly one drain, one stop.
      expect(events.filter((e) => e === "drain_started")).toHaveLength(1);
      expect(events.filter((e) => e === "worker_stopped")).toHaveLength(1);
    }
  });
});
