// The outcome recorder on the memory backend: each outcome's fenced write, its event, and the NACK.
import { afterEach, describe, expect, it } from "vitest";
import { SoniqError } from "../../src/errors.js";
import { JobTimeoutError } from "../../src/jobs/context.js";
import { silent, workerParts } from "../helpers/worker-parts.js";

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function setup() {
  const parts = await workerParts((soniq) => {
    soniq.job({ name: "rec.job", maxAttempts: 2, handler: async () => 1 });
  });
  await parts.runtime.completions.start();
  stops.push(() => parts.runtime.completions.stop());
  await parts.soniq.enqueue("rec.job", {});
  const [job] = await parts.claim();
  if (!job) throw new Error("nothing claimed");
  return { ...parts, job, definition: parts.soniq.definitions.get("rec.job") };
}

describe("OutcomeRecorder", () => {
  it("recordOutcome › success › row done through the batcher, job_done emitted", async () => {
    const { runtime, backend, job, definition, events } = await setup();
    const changed = await runtime.recorder.recordOutcome(
      job,
      { kind: "success", value: { ok: true } },
      definition,
      silent,
    );
    expect(changed).toBe(true);
    expect(await backend.jobGet({ id: job.id })).toMatchObject({ status: "done", attempts: 1 });
    expect(events.map((e) => e.name)).toEqual(["job_done"]);
  });

  it("recordOutcome › released › row queued, attempts kept, shutdown_nack emitted and remembered", async () => {
    const { runtime, backend, job, definition, events } = await setup();
    expect(await runtime.recorder.recordOutcome(job, { kind: "released" }, definition)).toBe(true);
    expect(await backend.jobGet({ id: job.id })).toMatchObject({ status: "queued", attempts: 0 });
    expect(runtime.recorder.released).toEqual([job.id]);
    expect(events[0]).toMatchObject({
      name: "shutdown_nack",
      payload: { reason: "shutdown_timeout" },
    });
  });

  it("planWrite › timeout on the last attempt › a dead-letter move", async () => {
    const { runtime, job, definition } = await setup();
    const last = { ...job, attempts: 1 };
    const plan = runtime.recorder.planWrite(
      last,
      { kind: "timeout", error: new JobTimeoutError(1) },
      definition,
      silent,
    );
    expect(plan.what).toBe("dead-letter move");
  });

  it("recordOutcome › row no longer ours › fenced out, nothing written, only job_fenced_out", async () => {
    const { runtime, backend, job, definition, events } = await setup();
    await backend.jobNack({
      id: job.id,
      owner: { workerId: job.workerId, claimToken: job.claimToken },
    });
    const changed = await runtime.recorder.recordOutcome(
      job,
      { kind: "error", error: new Error("late") },
      definition,
    );
    expect(changed).toBe(false);
    expect(await backend.jobGet({ id: job.id })).toMatchObject({ status: "queued", attempts: 0 });
    expect(events).toEqual([
      {
        name: "job_fenced_out",
        payload: {
          worker_id: job.workerId,
          job_id: job.id,
          job_name: job.name,
          queue: job.queue,
          op: "retry",
        },
      },
    ]);
  });

  it("recordOutcome › success › a first try that fails is retried (after the backoff) until it lands", async () => {
    const { runtime, backend, job, definition, events } = await setup();
    const real = backend.jobCompleteMany.bind(backend);
    let calls = 0;
    backend.jobCompleteMany = (params) => {
      calls += 1;
      return calls === 1 ? Promise.reject(new Error("connection reset")) : real(params);
    };
    const started = performance.now();
    const changed = await runtime.recorder.recordOutcome(
      job,
      { kind: "success", value: 7 },
      definition,
      silent,
    );
    expect(changed).toBe(true);
    expect(calls).toBe(2);
    // The retry waited for the first backoff step (100 ms), as a retry of any other write does.
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
    expect(runtime.recorder.failures).toBe(0);
    expect(await backend.jobGet({ id: job.id })).toMatchObject({ status: "done", attempts: 1 });
    expect(events.map((e) => e.name)).toEqual(["job_done"]);
  });

  it("recordOutcome › success › a first try refused as CLOSED is given up at once and counted", async () => {
    const { runtime, backend, job, definition, events } = await setup();
    let calls = 0;
    backend.jobCompleteMany = () => {
      calls += 1;
      return Promise.reject(new SoniqError("CLOSED", "closed"));
    };
    const changed = await runtime.recorder.recordOutcome(
      job,
      { kind: "success", value: 7 },
      definition,
      silent,
    );
    expect(changed).toBeUndefined();
    expect(calls).toBe(1);
    expect(runtime.recorder.failures).toBe(1);
    expect(await backend.jobGet({ id: job.id })).toMatchObject({ status: "processing" });
    expect(events).toEqual([]);
  });

  it("recordOutcome › error › a retry policy that throws an unprintable value still retries the row (not stranded)", async () => {
    const parts = await workerParts((soniq) => {
      soniq.job({
        name: "rec.unprintable",
        maxAttempts: 3,
        retry: () => {
          throw Object.create(null);
        },
        handler: async () => 1,
      });
    });
    await parts.runtime.completions.start();
    stops.push(() => parts.runtime.completions.stop());
    const id = await parts.soniq.enqueue("rec.unprintable", {});
    const [job] = await parts.claim();
    if (!job) throw new Error("nothing claimed");
    const changed = await parts.runtime.recorder.recordOutcome(
      job,
      { kind: "error", error: new Error("handler failed") },
      parts.soniq.definitions.get("rec.unprintable"),
      silent,
    );
    expect(changed).toBe(true);
    expect(await parts.backend.jobGet({ id })).toMatchObject({ status: "queued", attempts: 1 });
  });
});
