/**
 * Two shutdown promises of docs/shutdown.md and README ("Graceful shutdown"), on each backend:
 * a handler that returns inside `shutdownSettle` after its abort is recorded `done` (not NACK'd),
 * and an operator's cancel learned while the worker drains ends the job `cancelled` (not NACK'd,
 * never run again).
 */
import { pino } from "pino";
import { expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { type BackendTarget, describeEachBackend } from "../helpers/backend-targets.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });

async function open(target: BackendTarget, extra: Record<string, unknown>) {
  const backend = await target.open();
  return new Soniq({
    backend,
    logger: silent,
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
    ...extra,
  });
}

describeEachBackend("drain outcomes", (target) => {
  it("FORCE_TIMEOUT_PATH › a handler that returns inside shutdownSettle › recorded done with its value, not NACK'd", async () => {
    // Settle window of 30 s: the handler returns 100 ms after its abort, far inside it.
    const soniq = await open(target, { shutdownTimeout: 0.3, shutdownSettle: 30 });
    let abortReason: unknown;
    const unwinds = soniq.job({
      name: "unwinds.in.settle",
      handler: (_args: object, ctx) =>
        new Promise((resolve) =>
          ctx.signal.addEventListener("abort", () => {
            abortReason = ctx.signal.reason;
            setTimeout(() => resolve("saved partial work"), 100);
          }),
        ),
    });
    const id = await unwinds.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "processing", 10_000, "claimed");
    const t0 = Date.now();
    const exit = await worker.stop("SIGTERM");
    // The deadline path was taken (exit 1) but nothing was released: the run returned in time.
    expect(exit).toMatchObject({ reason: "shutdown_timeout", exitCode: 1, released: [] });
    expect((abortReason as Error).name).toBe("ShutdownTimeoutError");
    // It did not wait out the whole settle window (30 s): 0.3 s + 0.1 s and the writes take far
    // less than the bound, under any load the suite meets, and waiting out the window far more.
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(await soniq.getJob(id)).toMatchObject({
      status: "done",
      attempts: 1,
      result: "saved partial work",
    });
    await soniq.close();
  });

  it("DRAINING › a cancel learned while the worker drains › the job ends cancelled, drain exits 0, nothing NACK'd", async () => {
    const soniq = await open(target, { shutdownTimeout: 30, shutdownSettle: 5 });
    let abortReason: unknown;
    const waits = soniq.job({
      name: "waits.for.abort",
      handler: (_args: object, ctx) =>
        new Promise((_resolve, reject) =>
          ctx.signal.addEventListener("abort", () => {
            abortReason = ctx.signal.reason;
            reject(ctx.signal.reason);
          }),
        ),
    });
    const id = await waits.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "processing", 10_000, "claimed");
    const stopping = worker.stop("SIGTERM");
    expect(worker.state).toBe("DRAINING");
    expect(await soniq.jobs.cancel(id)).toBe("requested");
    const exit = await stopping;
    expect(exit).toEqual({ reason: "drained", exitCode: 0, released: [] });
    expect((abortReason as Error).name).toBe("JobCancelledError");
    // "attempt not counted" (docs/operations.md, cancelling a running job).
    expect(await soniq.getJob(id)).toMatchObject({ status: "cancelled", attempts: 0 });
    const detail = await soniq.jobs.get(id);
    expect(detail?.timeline.map((e) => e.kind)).toEqual([
      "enqueued",
      "started",
      "cancel_requested",
      "cancelled",
    ]);
    await soniq.close();
  });

  it("DRAINING then FORCE_TIMEOUT_PATH › a cancel learned in the drain, handler ignores every signal › cancelled, not NACK'd", async () => {
    // The cancel's settle window (1.5 s) outlasts the shutdown deadline (0.8 s): the deadline path
    // ends the run, and a cancelled run is recorded cancelled, never released to run again.
    const soniq = await open(target, { shutdownTimeout: 0.8, shutdownSettle: 1.5 });
    const stubborn = soniq.job({
      name: "ignores.everything",
      handler: () => new Promise((resolve) => setTimeout(() => resolve("late"), 8000)),
    });
    const id = await stubborn.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "processing", 10_000, "claimed");
    const stopping = worker.stop("SIGTERM");
    expect(await soniq.jobs.cancel(id)).toBe("requested");
    const exit = await stopping;
    expect(exit.released).toEqual([]);
    const row = await soniq.getJob(id);
    expect(row).toMatchObject({ status: "cancelled", result: null });
    await soniq.close();
  });
});
