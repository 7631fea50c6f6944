/**
 * The prefetch window in a worker, on each engine of test-backends.ts SUITE_KINDS (a SQLite file and PostgreSQL), with every backend call
 * counted: a flood of no-op jobs fills the buffer; SIGTERM with a full buffer NACKs it in ONE
 * write (one `jobNackMany`, no per-row NACK) while the running jobs finish (exit 0); buffered rows
 * are `processing` and go back to `queued` with attempts, interruptions and last_error unchanged;
 * a buffered row parked past its TTL is NACK'd instead of started; `prefetch: 0` never claims
 * beyond the free slots.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { Soniq } from "../../src/index.js";
import { crashLoopRule } from "../../src/maintenance/policy.js";
import type { PrefetchReleasedEvent } from "../../src/observability/events.js";
import { describeEachBackend, IN_PGBOUNCER_PROJECT } from "../helpers/backend-targets.js";
import { memoryBackend } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

/** Least time a claim takes in {@link flooded}, in milliseconds. */
const CLAIM_DELAY_MS = 3;

/** `backend` with every method call counted by name. */
function counted(backend: Backend): { backend: Backend; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(backend, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function" || typeof key !== "string") return value;
      return (...args: unknown[]) => {
        calls.set(key, (calls.get(key) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { backend: proxy, calls };
}

/**
 * A Soniq over `backend` with a flood job (no-op) and a gate job (blocks until `open()`), and
 * `flood` no-ops enqueued before `gated` gate jobs and `tail` more no-ops.
 */
async function flooded(
  inner: Backend,
  counts: { flood: number; gated: number; tail: number },
  extra: Record<string, unknown> = {},
) {
  // Every claim answers after at least CLAIM_DELAY_MS, so the adaptive target
  // (2 × start rate × claim time) is tens of rows on every backend: memory answers in
  // microseconds, its target would round to 0 and the buffer would fill only by chance (a GC
  // pause timed as a slow claim) — the flake a CI run found.
  const claim = inner.jobClaim.bind(inner);
  inner.jobClaim = async (params) => {
    const rows = await claim(params);
    await new Promise((r) => setTimeout(r, CLAIM_DELAY_MS));
    return rows;
  };
  const { backend, calls } = counted(inner);
  const soniq = new Soniq({
    backend,
    logger: pino({ level: "silent" }),
    env: {},
    pollInterval: 0.05,
    ...extra,
  });
  let open: () => void = () => undefined;
  const gate = new Promise<void>((r) => {
    open = r;
  });
  const gatesStarted = new Set<string>();
  soniq.job({ name: "pf.noop", handler: async () => null });
  soniq.job({
    name: "pf.gate",
    handler: async (_args: object, ctx) => {
      gatesStarted.add(ctx.jobId);
      await gate;
      return "opened";
    },
  });
  const items = (name: string, n: number) => Array.from({ length: n }, () => ({ name, args: {} }));
  const flood = await soniq.enqueueMany(items("pf.noop", counts.flood));
  const gated = await soniq.enqueueMany(items("pf.gate", counts.gated));
  const tail = await soniq.enqueueMany(items("pf.noop", counts.tail));
  const released: PrefetchReleasedEvent[] = [];
  soniq.events.on("prefetch_released", (e) => released.push(e));
  return { soniq, calls, open, gatesStarted, flood, gated, tail, released };
}

/**
 * No-op jobs ahead of the gate jobs: enough to warm the start rate that sizes the buffer (an
 * exponentially decaying count with a 500 ms time constant, prefetch-buffer.ts), so the claim that
 * takes the gate jobs also takes rows for the buffer. Its length beyond that proves nothing more
 * (3,000 before: a quarter of the file's time).
 */
const FLOOD = 800;
/** Rows behind the gate jobs: what the buffer holds while the gates block every slot. */
const TAIL = 400;

describeEachBackend("prefetch window", (target) => {
  it("SIGTERM › a full buffer behind busy slots › NACK'd in one write, running jobs finish, exit 0", async () => {
    const f = await flooded(await target.open(), { flood: FLOOD, gated: 5, tail: TAIL });
    const worker = f.soniq.worker({ concurrency: 5, prefetch: 500 });
    await worker.start();
    // Every slot holds a gate job; the buffer holds the rows claimed beyond them.
    await waitFor(() => f.gatesStarted.size === 5, 60_000, "every gate job running");
    const processing = (await f.soniq.stats()).processing;
    const stopping = worker.stop("SIGTERM");
    setTimeout(f.open, 100);
    const exit = await stopping;
    expect(exit).toEqual({ reason: "drained", exitCode: 0, released: [] });
    const drainNacks = f.released.filter((e) => e.reason === "drain");
    expect(drainNacks).toHaveLength(1);
    const buffered = drainNacks[0]?.job_ids ?? [];
    // The buffer was not empty (rows beyond the slots were `processing`), and went back in ONE write.
    expect(processing).toBeGreaterThan(5);
    expect(buffered.length).toBeGreaterThan(0);
    expect(f.calls.get("jobNackMany")).toBe(
      1 + f.released.filter((e) => e.reason !== "drain").length,
    );
    expect(f.calls.get("jobNack") ?? 0).toBe(0);
    for (const id of buffered) {
      expect(await f.soniq.getJob(id)).toMatchObject({
        status: "queued",
        attempts: 0,
        interruptions: 0,
        workerId: null,
        lastError: null,
      });
    }
    for (const id of f.gated) {
      expect(await f.soniq.getJob(id)).toMatchObject({ status: "done", attempts: 1 });
    }
    const stats = await f.soniq.stats();
    expect(stats.processing).toBe(0);
    expect(stats.done + stats.queued).toBe(FLOOD + 5 + TAIL);
    await f.soniq.close();
  }, 120_000);

  it("TTL › buffered rows parked behind busy slots › NACK'd unstarted once their TTL ends, never started", async () => {
    // heartbeatTimeout 1.2 s, interval 0.2 s → TTL = min(2 s, (1.2 − 0.2) / 2) = 0.5 s.
    const f = await flooded(
      await target.open(),
      { flood: FLOOD, gated: 5, tail: TAIL },
      { heartbeatInterval: 0.2, heartbeatTimeout: 1.2 },
    );
    const started = new Set<string>();
    f.soniq.events.on("job_started", (e) => started.add(e.job_id));
    const worker = f.soniq.worker({ concurrency: 5, prefetch: 500 });
    await worker.start();
    await waitFor(() => f.gatesStarted.size === 5, 60_000, "every gate job running");
    await waitFor(
      () => f.released.some((e) => e.reason === "ttl" && e.job_ids.length > 0),
      10_000,
      "a TTL release",
    );
    const expired = f.released.filter((e) => e.reason === "ttl").flatMap((e) => e.job_ids);
    for (const id of expired) {
      expect(started.has(id)).toBe(false);
      expect(await f.soniq.getJob(id)).toMatchObject({ status: "queued", attempts: 0 });
    }
    // With every slot busy and starts stopped, the target is 0: nothing is parked again (the
    // rows still `processing` beyond the 5 slots are completions being written).
    await new Promise((r) => setTimeout(r, 700)); // rows of a later claim expire a little later
    const releases = f.released.length;
    await new Promise((r) => setTimeout(r, 1200));
    expect(f.released.length).toBe(releases);
    f.open();
    const all = FLOOD + 5 + TAIL;
    await waitFor(async () => (await f.soniq.stats()).done === all, 60_000, "all done");
    await worker.stop();
    await f.soniq.close();
  }, 120_000);

  it("prefetch 0 › a flood › no claim asks for more than the free slots, no batched NACK", async () => {
    const inner = await target.open();
    const limits: number[] = [];
    const claim = inner.jobClaim.bind(inner);
    inner.jobClaim = (params) => {
      limits.push(params.limit);
      return claim(params);
    };
    // 450 no-ops at most 3 a claim: at least 150 claims before the gates, for the 100 below.
    const f = await flooded(inner, { flood: 450, gated: 3, tail: 200 });
    const worker = f.soniq.worker({ concurrency: 3, prefetch: 0 });
    await worker.start();
    await waitFor(() => f.gatesStarted.size === 3, 60_000, "every gate job running");
    expect(limits.length).toBeGreaterThan(100);
    expect(Math.max(...limits)).toBeLessThanOrEqual(3);
    const stopping = worker.stop("SIGTERM");
    f.open();
    expect(await stopping).toMatchObject({ exitCode: 0 });
    expect(f.calls.get("jobNackMany") ?? 0).toBe(0);
    await f.soniq.close();
  }, 120_000);
});

describe.skipIf(IN_PGBOUNCER_PROJECT)(
  "start TTL behind a job with a crash history (memory)",
  () => {
    it("job runner › an ordinary job waits longer than the start TTL behind a job that runs alone › NACK'd unstarted (ttl), run later, done once", async () => {
      // Found by the chaos run: a worker frozen past the stale window while its jobs waited behind a
      // job with a crash history started them after recovery had handed them on.
      const backend = await memoryBackend();
      const soniq = new Soniq({
        backend,
        logger: pino({ level: "silent" }),
        env: {},
        pollInterval: 0.05,
        heartbeatInterval: 0.2,
        heartbeatTimeout: 1.2, // start TTL = min(2 s, (1.2 − 0.2) / 2) = 0.5 s
      });
      const runs: string[] = [];
      soniq.job({
        name: "slow.alone",
        handler: async (_args: object, ctx) => {
          runs.push(`start ${ctx.jobId}`);
          await new Promise((r) => setTimeout(r, 1500));
          runs.push(`end ${ctx.jobId}`);
          return null;
        },
      });
      soniq.job({
        name: "quick",
        handler: async (_args: object, ctx) => {
          runs.push(`start ${ctx.jobId}`);
          return null;
        },
      });
      const suspect = await soniq.enqueue("slow.alone", {}, { priority: 0 });
      // A crash while it was claimed (start not known): an uncharged recovery gives it a history.
      await backend.jobClaim({ workerId: "gone", queues: null, limit: 1, deferStart: true });
      await backend.jobRecoverStale({ crashLoop: crashLoopRule(3) });
      const others = await Promise.all(
        [0, 1, 2].map(() => soniq.enqueue("quick", {}, { priority: 1 })),
      );
      const released: PrefetchReleasedEvent[] = [];
      soniq.events.on("prefetch_released", (e) => released.push(e));
      const worker = soniq.worker({ concurrency: 4 });
      await worker.start();
      await waitFor(async () => (await soniq.stats()).done === 4, 20_000, "all done");
      await worker.stop();
      const stale = new Set(released.filter((e) => e.reason === "ttl").flatMap((e) => e.job_ids));
      expect(others.some((id) => stale.has(id))).toBe(true);
      // Nothing started while the job with a crash history ran, and each ran exactly once.
      const end = runs.indexOf(`end ${suspect}`);
      for (const id of others) {
        expect(runs.filter((r) => r === `start ${id}`)).toHaveLength(1);
        expect(runs.indexOf(`start ${id}`)).toBeGreaterThan(end);
        expect(await soniq.getJob(id)).toMatchObject({
          status: "done",
          attempts: 1,
          interruptions: 0,
        });
      }
      await soniq.close();
    }, 30_000);
  },
);
