// The leader's maintenance services share one lane (src/lifecycle/lane.ts): at most one of their
// backend calls at a time, a slow call never starves the others beyond one call, and the
// elector's lease renewal never waits behind them. On the memory backend, with its calls watched.
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { Lane } from "../../src/lifecycle/lane.js";
import { createMaintenance } from "../../src/maintenance/maintenance.js";
import { EventBus } from "../../src/observability/event-bus.js";
import type { SoniqEventMap } from "../../src/observability/events.js";
import { memoryBackend } from "../helpers/test-backends.js";

const logger = pino({ level: "silent" });

/**
 * The leader's maintenance on `backend` with fast intervals (heartbeat 0.02 s, timeout 0.2 s),
 * healthy from the start; `lane` and `log` when a case needs its own.
 */
function maintainer(backend: Backend, lane?: Lane, log = logger) {
  return createMaintenance({
    backend,
    workerId: "w1",
    settings: { heartbeatInterval: 0.02, heartbeatTimeout: 0.2, maxInterruptions: 3 },
    logger: log,
    healthyForSeconds: () => 1,
    ...(lane === undefined ? {} : { lane }),
  });
}

/** Every call through a watched backend: its method, start and end (ms, performance.now()). */
interface Call {
  method: string;
  start: number;
  end?: number;
}

/**
 * `backend` with each method call (its own and its stores') recorded in `calls`; `slow` may hold
 * a call up before it runs.
 */
function watched(
  backend: Backend,
  calls: Call[],
  slow: (method: string, args: unknown[]) => Promise<unknown> | undefined,
): Backend {
  const wrap = <T extends object>(target: T, prefix: string): T =>
    new Proxy(target, {
      get(t, key) {
        const value: unknown = Reflect.get(t, key, t);
        if (typeof value === "function") {
          return async (...args: unknown[]) => {
            const call: Call = { method: `${prefix}${String(key)}`, start: performance.now() };
            calls.push(call);
            try {
              const held = slow(call.method, args);
              if (held) return await held;
              return await Reflect.apply(value, t, args);
            } finally {
              call.end = performance.now();
            }
          };
        }
        if (
          (key === "admin" || key === "flows" || key === "submissions") &&
          typeof value === "object" &&
          value !== null
        ) {
          return wrap(value, `${String(key)}.`);
        }
        return value;
      },
    });
  return wrap(backend, "");
}

/** The most calls (other than the elector's) overlapping at any instant. */
function mostAtOnce(calls: Call[]): number {
  const edges: [number, number][] = [];
  for (const c of calls) {
    if (c.method.startsWith("lease")) continue;
    edges.push([c.start, 1], [c.end ?? Number.POSITIVE_INFINITY, -1]);
  }
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, d] of edges) {
    now += d;
    most = Math.max(most, now);
  }
  return most;
}

const until = async (check: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe("maintenance lane", () => {
  it("maintainer › leading, every service ticking › one backend call at a time besides the elector's", async () => {
    const calls: Call[] = [];
    const backend = watched(await memoryBackend(), calls, () => undefined);
    const events = new EventBus<SoniqEventMap>(logger);
    events.on("queue_metrics", () => undefined);
    const { service } = createMaintenance({
      backend,
      workerId: "w1",
      settings: {
        heartbeatInterval: 0.02,
        heartbeatTimeout: 0.2,
        maxInterruptions: 3,
        metricsInterval: 0.02,
      },
      logger,
      events,
      healthyForSeconds: () => 1,
    });
    await service.start();
    await until(
      () =>
        calls.filter((c) => c.method === "jobRecoverStale").length >= 5 &&
        calls.some((c) => c.method === "jobQueueMetrics") &&
        calls.some((c) => c.method === "flows.flowEndsTake"),
    );
    await service.stop();
    // Several services at the same interval: without the lane their first ticks overlap.
    expect(new Set(calls.map((c) => c.method)).size).toBeGreaterThanOrEqual(6);
    expect(mostAtOnce(calls)).toBe(1);
  });

  it("maintainer › a prune call held up › the elector renews meanwhile and the rescuer runs right after it", async () => {
    const calls: Call[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<number>((resolve) => {
      release = () => resolve(0);
    });
    const backend = watched(await memoryBackend(), calls, (method) =>
      method === "jobPruneFinished" ? held : undefined,
    );
    const lane = new Lane();
    const { service } = maintainer(backend, lane);
    await service.start();
    await until(() => calls.some((c) => c.method === "jobPruneFinished"));
    const pruneStarted = performance.now();
    const leasesBefore = calls.filter((c) => c.method === "leaseTryTake").length;
    // The elector renews every 20 ms whatever the lane holds.
    await until(() => calls.filter((c) => c.method === "leaseTryTake").length >= leasesBefore + 3);
    // Meanwhile the other services' calls wait in the lane: none started during the prune.
    expect(calls.filter((c) => c.start > pruneStarted && !c.method.startsWith("lease"))).toEqual(
      [],
    );
    expect(lane.pending).toBeGreaterThanOrEqual(2);
    // Each waiting service has one call queued, not one per missed interval.
    expect(lane.pending).toBeLessThanOrEqual(6);
    const released = performance.now();
    release();
    // The rescuer's next call comes right after the prune call (one call's wait), not after the
    // whole pruner tick: its ticks go on at their interval.
    await until(
      () => calls.filter((c) => c.method === "jobRecoverStale" && c.start > released).length >= 3,
    );
    await service.stop();
    expect(mostAtOnce(calls)).toBe(1);
  });

  it("maintainer › stopped while its services' calls wait behind a held call › none of them runs after the stop", async () => {
    const calls: Call[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<number>((resolve) => {
      release = () => resolve(0);
    });
    const backend = watched(await memoryBackend(), calls, (method) =>
      method === "jobPruneFinished" ? held : undefined,
    );
    const lane = new Lane();
    const { service } = maintainer(backend, lane);
    await service.start();
    await until(() => calls.some((c) => c.method === "jobPruneFinished"));
    await until(() => lane.pending >= 3);
    // The stop's bound passes while the prune call is held; then the held call ends.
    const stopping = service.stop(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const stoppedAt = performance.now();
    release();
    await stopping;
    await until(() => lane.pending === 0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Only the elector's resignation may come after the stop; the queued calls were dropped.
    expect(
      calls
        .filter((c) => c.start > stoppedAt && !c.method.startsWith("lease"))
        .map((c) => c.method),
    ).toEqual([]);
  });

  it("maintainer › a pruner tick of many batches › the rescuer's calls run between the batches", async () => {
    const calls: Call[] = [];
    let batches = 0;
    const backend = watched(await memoryBackend(), calls, (method, args) => {
      if (method !== "jobPruneFinished") return undefined;
      batches += 1;
      const { limit } = args[0] as { limit: number };
      // Ten full batches (so the tick goes on), 30 ms each, then a short one.
      return new Promise((resolve) => setTimeout(() => resolve(batches <= 10 ? limit : 0), 30));
    });
    const { service } = maintainer(backend);
    await service.start();
    await until(() => batches >= 11);
    const prunes = calls.filter((c) => c.method === "jobPruneFinished");
    const first = prunes[0]?.start ?? 0;
    const last = prunes[10]?.start ?? 0;
    await service.stop();
    const rescues = calls.filter(
      (c) => c.method === "jobRecoverStale" && c.start > first && c.start < last,
    );
    // 300 ms of pruning with the rescuer due every 20 ms: it ran between the batches.
    expect(rescues.length).toBeGreaterThanOrEqual(3);
    expect(mostAtOnce(calls)).toBe(1);
  });
  it("maintainer › a prune call stuck past its bound › the lane moves on: the rescuer runs beside it, the prune still ends", async () => {
    const calls: Call[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<number>((resolve) => {
      release = () => resolve(0);
    });
    const backend = watched(await memoryBackend(), calls, (method) =>
      method === "jobPruneFinished" ? held : undefined,
    );
    // The bound's timer is the test's: it passes when the test says.
    const timers: { fire: () => void; cancelled: boolean }[] = [];
    const lane = new Lane({
      timer: (fire) => {
        const t = { fire, cancelled: false };
        timers.push(t);
        return () => {
          t.cancelled = true;
        };
      },
    });
    const { service } = maintainer(backend, lane);
    await service.start();
    await until(() => calls.some((c) => c.method === "jobPruneFinished"));
    await until(() => lane.pending >= 2);
    const prune = calls.find((c) => c.method === "jobPruneFinished");
    // Held: nothing else of the lane started meanwhile.
    const live = timers.filter((t) => !t.cancelled);
    expect(live).toHaveLength(1);
    const passed = performance.now();
    live[0]?.fire();
    await until(
      () => calls.filter((c) => c.method === "jobRecoverStale" && c.start > passed).length >= 3,
    );
    // The prune is still running: two calls at once now, never more (the pruner waits for its own).
    expect(prune?.end).toBeUndefined();
    expect(mostAtOnce(calls)).toBe(2);
    release();
    await until(() => prune?.end !== undefined);
    await service.stop();
  });

  it("maintainer › its own lane › bounded by one heartbeat interval (at least 1 s); an overrun is logged", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const warnLogger = pino({ level: "warn" }, sink);
    const calls: Call[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<number>((resolve) => {
      release = () => resolve(0);
    });
    const backend = watched(await memoryBackend(), calls, (method) =>
      method === "jobPruneFinished" ? held : undefined,
    );
    const { service } = maintainer(backend, undefined, warnLogger);
    await service.start();
    await until(() => calls.some((c) => c.method === "jobPruneFinished"));
    const pruneStarted = performance.now();
    await until(() => calls.some((c) => c.method === "jobRecoverStale" && c.start > pruneStarted));
    // The rescuer's next call waited for the bound (1 s here), not for the prune.
    const rescued = calls.find((c) => c.method === "jobRecoverStale" && c.start > pruneStarted);
    expect((rescued?.start ?? 0) - pruneStarted).toBeGreaterThanOrEqual(900);
    const warning = lines.map((l) => JSON.parse(l)).find((l) => l.call === "jobPruneFinished");
    expect(warning).toMatchObject({ level: 40, bound_seconds: 1 });
    release();
    await service.stop();
  });
});
