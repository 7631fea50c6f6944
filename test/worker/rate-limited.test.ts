// Back-pressure from a downstream (issue 28 item 4; docs/flow-control.md, "Back-pressure:
// ctx.rateLimited") on a SQLite file and on PostgreSQL, with two worker instances sharing one
// store: a handler's `ctx.rateLimited(ms, { scope: "key" })` puts its job back without spending an
// attempt and pauses every job of its key on both workers (jobs of other keys run meanwhile);
// scope "job" delays the job only; a `scope_paused` event is emitted; a sync (thread) handler can
// return it too; bad values are coded errors.
import { pino } from "pino";
import { expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { type ScopePausedEvent, Soniq, type SoniqError } from "../../src/index.js";
import { describeEachBackend } from "../helpers/backend-targets.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });
const HANDLERS = new URL("../fixtures/thread-handlers.mjs", import.meta.url);

function instanceOn(backend: Backend): Soniq {
  return new Soniq({
    backend,
    logger: silent,
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
  });
}

describeEachBackend("worker: ctx.rateLimited", (target) => {
  it("rateLimited › scope key on one of two workers › every job of the key waits on both, other keys run, no attempt spent, scope_paused emitted", async () => {
    const backend = await target.open();
    const instances = [instanceOn(backend), instanceOn(backend)];
    const starts: Array<{ tenant: string; n: number; at: number }> = [];
    const paused: ScopePausedEvent[] = [];
    let limitedAt = 0;
    const define = (soniq: Soniq) =>
      soniq.job({
        name: "crm.push",
        concurrency: { key: (args: { tenant: string; n: number }) => args.tenant, limit: 5 },
        handler: async (args: { tenant: string; n: number }, ctx) => {
          starts.push({ ...args, at: Date.now() });
          if (args.tenant === "slow" && args.n === 0 && limitedAt === 0) {
            limitedAt = Date.now();
            return ctx.rateLimited(1500, { scope: "key" });
          }
          return undefined;
        },
      });
    const jobs = instances.map(define);
    for (const soniq of instances) soniq.events.on("scope_paused", (e) => paused.push(e));
    const first = await jobs[0]!.enqueue({ tenant: "slow", n: 0 });
    const workers = instances.map((s) => s.worker({ concurrency: 2, prefetch: 0 }));
    await Promise.all(workers.map((w) => w.start()));
    await waitFor(() => paused.length === 1);
    const pausedAt = limitedAt;
    const others: string[] = [];
    for (let n = 1; n <= 3; n++) others.push(await jobs[n % 2]!.enqueue({ tenant: "slow", n }));
    const keys = await instances[0]!.queues.rateKeys();
    expect(keys).toEqual([
      { key: "slow", startsInWindow: 0, nextWindowAt: null, pausedUntil: expect.any(Date) },
    ]);
    expect(keys[0]!.pausedUntil!.getTime()).toBeGreaterThan(pausedAt + 1000);
    const fast = await jobs[1]!.enqueue({ tenant: "fast", n: 0 });
    await waitFor(async () => (await instances[0]!.getJob(fast))?.status === "done");
    // The key's jobs wait while the fast key's job ran.
    for (const id of [first, ...others]) {
      expect(await instances[0]!.getJob(id)).toMatchObject({ status: "queued", attempts: 0 });
    }
    await waitFor(async () => {
      const rows = await Promise.all([first, ...others].map((id) => instances[0]!.getJob(id)));
      return rows.every((r) => r?.status === "done");
    }, 30_000);
    await Promise.all(workers.map((w) => w.stop()));
    const slowLater = starts.filter((s) => s.tenant === "slow" && s.at > pausedAt);
    expect(slowLater).toHaveLength(4);
    for (const s of slowLater) expect(s.at - pausedAt).toBeGreaterThanOrEqual(1400);
    expect(await instances[0]!.getJob(first)).toMatchObject({ status: "done", attempts: 1 });
    expect(paused[0]).toMatchObject({
      job_id: first,
      scope: "key",
      key: "slow",
      paused_ms: 1500,
    });
  }, 60_000);

  it("rateLimited › scope queue › the queue pauses on both workers, other queues run, the pause ends by itself; an operator's pause is kept", async () => {
    const backend = await target.open();
    const instances = [instanceOn(backend), instanceOn(backend)];
    const starts: Array<{ queue: string; n: number; at: number }> = [];
    let limitedAt = 0;
    const define = (soniq: Soniq) => {
      const mail = soniq.job({
        name: "mail.send",
        queue: "mail",
        handler: async (args: { n: number }, ctx) => {
          starts.push({ queue: "mail", n: args.n, at: Date.now() });
          if (args.n === 0 && limitedAt === 0) {
            limitedAt = Date.now();
            return ctx.rateLimited(1500, { scope: "queue" });
          }
          return undefined;
        },
      });
      const other = soniq.job({
        name: "other.work",
        handler: async (args: { n: number }) => {
          starts.push({ queue: "default", n: args.n, at: Date.now() });
        },
      });
      return { mail, other };
    };
    const jobs = instances.map(define);
    const first = await jobs[0]!.mail.enqueue({ n: 0 });
    const workers = instances.map((s) => s.worker({ concurrency: 2, prefetch: 0 }));
    await Promise.all(workers.map((w) => w.start()));
    await waitFor(
      async () => limitedAt > 0 && (await instances[0]!.getJob(first))?.status === "queued",
    );
    const queues = await instances[0]!.queues.list();
    const mail = queues.find((q) => q.name === "mail");
    expect(mail).toMatchObject({ paused: true });
    // The end of the timed pause is shown (soniq queues list, status --json, dashboard).
    expect(mail?.pausedUntil?.getTime() ?? 0).toBeGreaterThan(limitedAt + 1000);
    const more = [await jobs[1]!.mail.enqueue({ n: 1 }), await jobs[0]!.mail.enqueue({ n: 2 })];
    const other = await jobs[1]!.other.enqueue({ n: 9 });
    await waitFor(async () => (await instances[0]!.getJob(other))?.status === "done");
    for (const id of more)
      expect(await instances[0]!.getJob(id)).toMatchObject({ status: "queued" });
    await waitFor(async () => {
      const rows = await Promise.all([first, ...more].map((id) => instances[0]!.getJob(id)));
      return rows.every((r) => r?.status === "done");
    }, 30_000);
    const later = starts.filter((s) => s.queue === "mail" && s.at > limitedAt);
    expect(later).toHaveLength(3);
    for (const s of later) expect(s.at - limitedAt).toBeGreaterThanOrEqual(1400);
    expect(await instances[0]!.getJob(first)).toMatchObject({ attempts: 1 });
    expect((await instances[0]!.queues.list()).find((q) => q.name === "mail")).toMatchObject({
      paused: false,
      pausedUntil: null,
    });
    // An operator's pause is not turned into a timed one.
    await instances[0]!.queues.pause("mail");
    await backend.jobPauseQueue({ queue: "mail", delaySeconds: 0.1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await instances[0]!.queues.list()).find((q) => q.name === "mail")).toMatchObject({
      paused: true,
      pausedUntil: null,
    });
    await Promise.all(workers.map((w) => w.stop()));
  }, 60_000);

  it("rateLimited › scope job › only that job waits; its key's other jobs run", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const ran: number[] = [];
    let limited = false;
    const job = soniq.job({
      name: "crm.pull",
      rateLimit: { limit: 100, per: 1, key: () => "acct" },
      handler: async (args: { n: number }, ctx) => {
        if (args.n === 0 && !limited) {
          limited = true;
          return ctx.rateLimited(60_000);
        }
        ran.push(args.n);
        return undefined;
      },
    });
    const first = await job.enqueue({ n: 0 });
    const worker = soniq.worker({ concurrency: 1, prefetch: 0 });
    await worker.start();
    await waitFor(() => limited);
    await job.enqueue({ n: 1 });
    await waitFor(() => ran.includes(1));
    await worker.stop();
    const row = await soniq.getJob(first);
    expect(row).toMatchObject({ status: "queued", attempts: 0, interruptions: 0 });
    expect(row!.scheduledAt.getTime()).toBeGreaterThan(Date.now() + 50_000);
  }, 30_000);

  it("rateLimited › from a sync (thread) handler › back to queued without an attempt, then runs", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const paused: ScopePausedEvent[] = [];
    soniq.events.on("scope_paused", (e) => paused.push(e));
    const job = soniq.syncJob<{ marker: string; ms: number }>({
      name: "t.rate",
      handlerModule: HANDLERS,
      exportName: "rateLimitedOnce",
    });
    const id = await job.enqueue({ marker: `${tempDir()}/marker`, ms: 200 });
    const worker = soniq.worker({ concurrency: 1 });
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "done", 20_000);
    await worker.stop();
    expect(await soniq.getJob(id)).toMatchObject({
      attempts: 1,
      result: "finished after a rate limit",
    });
    expect(paused).toHaveLength(1);
    expect(paused[0]).toMatchObject({ job_id: id, scope: "job", key: null, paused_ms: 200 });
  }, 30_000);

  it("rateLimited › bad values › SoniqError INVALID_OPTION, and the run fails as a thrown error", async () => {
    const { rateLimited } = await import("../../src/index.js");
    for (const ms of [-1, Number.NaN, 86_400_001]) {
      expect(() => rateLimited(ms)).toThrow(
        expect.objectContaining({ code: "INVALID_OPTION" }) as SoniqError,
      );
    }
    expect(() => rateLimited(10, { scope: "tenant" as "key" })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION" }) as SoniqError,
    );
    expect(rateLimited(10)).toMatchObject({ retryAfterMs: 10, scope: "job" });
  });
});
