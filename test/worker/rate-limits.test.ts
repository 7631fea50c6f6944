// Rate limits (issue 28 item 3; docs/flow-control.md, "Rate limits") on a SQLite file and on
// PostgreSQL, with several worker instances sharing one store: the starts the database recorded
// (each job's started_at) of a key in any window never exceed the limit over many windows (and the
// limit is reached: the drain takes as long as the windows say), held jobs keep their attempts,
// hold no worker slot and do not extend a drain, a job enqueued while a worker is idle is not
// handed off past the bucket, crash recovery of a rate-limited job is unchanged, and bad settings
// are coded errors.
import { pino } from "pino";
import { expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { Soniq, type SoniqError } from "../../src/index.js";
import { crashLoopRule } from "../../src/maintenance/policy.js";
import { describeEachBackend } from "../helpers/backend-targets.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });

function instanceOn(backend: Backend): Soniq {
  return new Soniq({
    backend,
    logger: silent,
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The most starts in any window of `windowMs` beginning at a start (times sorted or not). */
function worstWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let worst = 0;
  for (let i = 0; i < sorted.length; i++) {
    let n = 0;
    for (let j = i; j < sorted.length && sorted[j]! < sorted[i]! + windowMs; j++) n++;
    worst = Math.max(worst, n);
  }
  return worst;
}

describeEachBackend("worker: rate limits", (target) => {
  it("rate › 3 workers, 2 keys, limit 3 per 0.4 s › starts per window <= limit over many windows, all done once, attempts 1", async () => {
    const backend = await target.open();
    const starts = new Map<string, number[]>();
    const instances = [0, 1, 2].map(() => instanceOn(backend));
    const define = (soniq: Soniq) =>
      soniq.job({
        name: "api.call",
        rateLimit: {
          limit: 3,
          per: 0.4,
          key: (args: { account: string; n: number }) => args.account,
        },
        handler: async (args: { account: string; n: number }) => {
          const list = starts.get(args.account) ?? [];
          list.push(Date.now());
          starts.set(args.account, list);
          await sleep(2);
        },
      });
    const jobs = instances.map(define);
    const ids: string[] = [];
    for (let n = 0; n < 18; n++) {
      for (const account of ["a", "b"]) ids.push(await jobs[n % 3]!.enqueue({ account, n }));
    }
    const workers = instances.map((s) => s.worker({ concurrency: 4, prefetch: 2 }));
    await Promise.all(workers.map((w) => w.start()));
    await waitFor(
      () => (starts.get("a")?.length ?? 0) + (starts.get("b")?.length ?? 0) === 36,
      60_000,
    );
    await Promise.all(workers.map((w) => w.stop()));
    const rows = await Promise.all(ids.map((id) => instances[0]!.getJob(id)));
    for (const row of rows) expect(row).toMatchObject({ status: "done", attempts: 1 });
    for (const account of ["a", "b"]) {
      expect(starts.get(account)).toHaveLength(18);
      // The starts as the database counted them: each job's started_at is the instant its claim
      // charged the window (docs/flow-control.md), so the limit is checked exactly, whatever the
      // load did to the handlers' start in this process (prefetch, event-loop lag).
      const times = rows
        .filter((row) => (row!.args as { account: string }).account === account)
        .map((row) => row!.startedAt!.getTime());
      expect(times).toHaveLength(18);
      // No window of 0.4 s holds more than 3 starts.
      expect(worstWindow(times, 400)).toBeLessThanOrEqual(3);
      // 18 starts at 3 per window: at least 5 whole windows between the first and the last.
      expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(5 * 400);
    }
  }, 90_000);

  it("rate › a job over its limit › stays queued with attempts 0, holds no slot, not handed off, and does not extend the drain", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const ran: string[] = [];
    const limited = soniq.job({
      name: "report.limited",
      rateLimit: { limit: 1, per: 60 },
      handler: async (args: { n: number }) => {
        ran.push(`limited/${args.n}`);
      },
    });
    const plain = soniq.job({
      name: "report.plain",
      handler: async (args: { n: number }) => {
        ran.push(`plain/${args.n}`);
      },
    });
    // One slot, idle on the queue: the enqueues below would be handed off if hand-off ignored the limit.
    const worker = soniq.worker({ concurrency: 1, prefetch: 1 });
    await worker.start();
    const first = await limited.enqueue({ n: 0 });
    await waitFor(() => ran.includes("limited/0"));
    const second = await limited.enqueue({ n: 1 });
    const third = await limited.enqueue({ n: 2 });
    // The worker's one slot is free for other jobs while the limited ones wait.
    await plain.enqueue({ n: 0 });
    await waitFor(() => ran.includes("plain/0"));
    await sleep(300);
    expect(ran).toEqual(["limited/0", "plain/0"]);
    expect(await soniq.getJob(first)).toMatchObject({ status: "done", attempts: 1 });
    for (const id of [second, third]) {
      expect(await soniq.getJob(id)).toMatchObject({ status: "queued", attempts: 0 });
    }
    // Nothing of the waiting jobs is in flight: the drain ends at once.
    // Waiting jobs holding the drain would keep it to shutdownTimeout (30 s): the bound is far
    // from both that and an idle drain's time, so load cannot make it fail.
    const began = Date.now();
    await worker.stop();
    expect(Date.now() - began).toBeLessThan(20_000);
    for (const id of [second, third]) {
      expect(await soniq.getJob(id)).toMatchObject({
        status: "queued",
        attempts: 0,
        interruptions: 0,
      });
    }
  }, 30_000);

  it("rate › a long poll interval › the claim loop wakes when the window opens, not at the next poll", async () => {
    const backend = await target.open();
    const soniq = new Soniq({
      backend,
      logger: silent,
      env: {},
      pollInterval: 30,
      heartbeatInterval: 0.1,
    });
    let ran = 0;
    const job = soniq.job({
      name: "paced",
      rateLimit: { limit: 1, per: 0.3 },
      handler: async () => {
        ran += 1;
      },
    });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await job.enqueue({}));
    const worker = soniq.worker({ concurrency: 2, prefetch: 0 });
    await worker.start();
    // Polling every 30 s, 4 starts at one per 0.3 s would take 90 s; the window wake-up: ~1 s.
    await waitFor(() => ran === 4, 15_000);
    await worker.stop();
    // The starts as the database counted them (started_at): one per window, exactly.
    const starts = (await Promise.all(ids.map((id) => soniq.getJob(id))))
      .map((row) => row!.startedAt!.getTime())
      .sort((a, b) => a - b);
    for (let i = 1; i < 4; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(300);
  }, 30_000);

  it("rate › crash recovery › a dead worker's rate-limited job is requeued as before and runs once its window allows", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const ran: number[] = [];
    const job = soniq.job({
      name: "sync.limited",
      rateLimit: { limit: 1, per: 0.5, key: () => "acct" },
      handler: async (args: { n: number }) => {
        ran.push(args.n);
      },
    });
    const id = await job.enqueue({ n: 0 });
    const dead = await backend.jobClaim({ workerId: "dead-worker", limit: 5, queues: null });
    expect(dead.map((j) => j.id)).toEqual([id]);
    const other = await job.enqueue({ n: 1 });
    // The key's one start in this window is taken (by the dead worker's claim).
    expect(await backend.jobClaim({ workerId: "other", limit: 5, queues: null })).toEqual([]);
    const recovered = await backend.jobRecoverStale({ crashLoop: crashLoopRule(3) });
    expect(recovered.requeued.map((j) => j.id)).toEqual([id]);
    const worker = soniq.worker({ concurrency: 3 });
    await worker.start();
    await waitFor(async () => (await soniq.getJob(other))?.status === "done", 30_000);
    await waitFor(async () => (await soniq.getJob(id))?.status === "done", 30_000);
    await worker.stop();
    expect(ran.sort()).toEqual([0, 1]);
    expect(await soniq.getJob(other)).toMatchObject({ attempts: 1 });
  }, 60_000);

  it("rate › one key in a queue with maxRunning and in another queue › admitted once per window, whatever queue its jobs are in", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const job = soniq.job({
      name: "acct.sync",
      rateLimit: { limit: 1, per: 60, key: () => "acct" },
      handler: async () => undefined,
    });
    for (let i = 0; i < 3; i++) await job.enqueue({}, { queue: "lim" });
    for (let i = 0; i < 3; i++) await job.enqueue({});
    await soniq.queues.set("lim", { maxRunning: 5 });
    // Claims for 1.5 s (the limited-queue list may be cached for a second on PostgreSQL): one
    // start in the window in all, though each queue alone would admit one.
    let claimed = 0;
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      claimed += (await backend.jobClaim({ workerId: "w", limit: 10, queues: null })).length;
      await sleep(50);
    }
    expect(claimed).toBe(1);
  });

  it("rate › with a concurrency limit on the same key › both hold", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const job = soniq.job({
      name: "tenant.both",
      concurrency: { key: (args: { tenant: string }) => args.tenant, limit: 1 },
      rateLimit: { limit: 2, per: 60 },
      handler: async () => undefined,
    });
    for (let i = 0; i < 4; i++) await job.enqueue({ tenant: "t" });
    // Concurrency 1: one job per claim while it is processing.
    const a = await backend.jobClaim({ workerId: "w", limit: 10, queues: null });
    expect(a).toHaveLength(1);
    expect(await backend.jobClaim({ workerId: "w", limit: 10, queues: null })).toEqual([]);
    await backend.jobComplete({
      id: a[0]!.id,
      owner: a[0]!,
      result: null,
      resultRetentionSeconds: 60,
    });
    const b = await backend.jobClaim({ workerId: "w", limit: 10, queues: null });
    expect(b).toHaveLength(1);
    await backend.jobComplete({
      id: b[0]!.id,
      owner: b[0]!,
      result: null,
      resultRetentionSeconds: 60,
    });
    // Two starts in the window: the rate limit holds the other two, though the key is free.
    expect(await backend.jobClaim({ workerId: "w", limit: 10, queues: null })).toEqual([]);
  });

  it("rate › bad settings › SoniqError with a code; the key and window are stored", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const bad: unknown[] = [
      { limit: 0, per: 1 },
      { limit: 1.5, per: 1 },
      { limit: 1, per: 0 },
      { limit: 1, per: 0.0001 },
      { limit: 1, per: 86_401 },
      { limit: 1, per: Number.NaN },
      { limit: 1, per: 1, key: "k" },
      { limit: 1, per: 1, extra: true },
      null,
    ];
    for (const rateLimit of bad) {
      expect(() =>
        soniq.job({
          name: "bad.rate",
          rateLimit: rateLimit as { limit: number; per: number },
          handler: async () => undefined,
        }),
      ).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }) as SoniqError);
    }
    expect(() =>
      soniq.job({
        name: "bad.two.keys",
        concurrency: { key: () => "a", limit: 1 },
        rateLimit: { limit: 1, per: 1, key: () => "b" },
        handler: async () => undefined,
      }),
    ).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }) as SoniqError);
    const named = soniq.job({
      name: "rated",
      rateLimit: { limit: 5, per: 1.5 },
      handler: async () => undefined,
    });
    const id = await named.enqueue({});
    expect(JSON.parse((await backend.jobGet({ id }))?.meta ?? "{}")).toEqual({
      concurrency: { key: "rated" },
      rate: { limit: 5, per: 1500 },
    });
    const over = await named.enqueue({}, { concurrencyKey: "acct-9" });
    expect(JSON.parse((await backend.jobGet({ id: over }))?.meta ?? "{}")).toEqual({
      concurrency: { key: "acct-9" },
      rate: { limit: 5, per: 1500 },
    });
    const keyed = soniq.job({
      name: "rated.keyed",
      rateLimit: { limit: 1, per: 1, key: (args: { k: string }) => args.k },
      handler: async () => undefined,
    });
    await expect(keyed.enqueue({ k: "" })).rejects.toMatchObject({
      code: "INVALID_ENQUEUE_OPTION",
    });
  });
});
