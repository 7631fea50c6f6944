// Hand-off at enqueue on SQLite (contract/hand-off.ts, transactions.ts `insertHandedOff`): a pool
// enqueue of one due job, with an in-process worker idle on its queue, is inserted already claimed
// by that worker, which starts it without a claim; never past a due backlog, never for a paused or
// limited queue, never when more queued rows exist than the probe reads; dedup and a refused
// insert settle the reservation as the ordinary path would.
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import type {
  ClaimedJob,
  HandOffReservation,
  HandOffTaker,
} from "../../src/backends/contract/index.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { HAND_OFF_PROBE_ROWS } from "../../src/backends/sqlite/transactions.js";
import { Soniq } from "../../src/index.js";
import { newJob } from "../contract/helpers.js";
import { waitForEvent } from "../helpers/events.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

describe("sqlite: hand-off at enqueue", () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    removeTempDirs();
  });

  async function openBackend(): Promise<SqliteBackend> {
    const backend = new SqliteBackend({ path: join(tempDir("soniq-sqlite-ho-"), "h.db") });
    closers.push(() => backend.close());
    await backend.setup();
    return backend;
  }

  /** A test taker at the backend's desk: grants every reservation and records how each settled. */
  function taker(backend: SqliteBackend, workerId = "w-test") {
    const log: Array<{ queue: string; how: "deliver" | "cancel" | "lost"; job?: ClaimedJob }> = [];
    const asked: string[] = [];
    const t: HandOffTaker = {
      reserve(queue): HandOffReservation {
        asked.push(queue);
        return {
          workerId,
          deliver: (job) => void log.push({ queue, how: "deliver", job }),
          cancel: () => void log.push({ queue, how: "cancel" }),
          lost: () => void log.push({ queue, how: "lost" }),
        };
      },
    };
    const unregister = backend.handOff.register(t);
    return { log, asked, unregister };
  }

  it("hand-off › an idle worker, an enqueue of one due job › inserted claimed by the worker and run without a claim", async () => {
    const backend = await openBackend();
    const claimed = new Set<string>();
    const answers = { count: 0 };
    const claim = backend.jobClaim.bind(backend);
    vi.spyOn(backend, "jobClaim").mockImplementation(async (params) => {
      const jobs = await claim(params);
      for (const job of jobs) claimed.add(job.id);
      answers.count += 1;
      return jobs;
    });
    const soniq = new Soniq({
      backend,
      logger: pino({ level: "silent" }),
      env: {},
      pollInterval: 5,
      heartbeatInterval: 0.2,
    });
    closers.push(() => soniq.close());
    let release: (() => void) | undefined;
    const job = soniq.job({
      name: "ho.job",
      handler: async (args: { wait?: boolean; n: number }) => {
        if (args.wait) await new Promise<void>((r) => (release = r));
        return args.n;
      },
    });
    const worker = soniq.worker({ concurrency: 2 });
    closers.push(async () => {
      release?.();
      await worker.stop();
    });
    await worker.start();
    await waitFor(() => answers.count > 0, 5000, "the first claim");
    const started = waitForEvent(soniq, "job_started");
    const id = await job.enqueue({ wait: true, n: 1 });
    expect((await started).job_id).toBe(id);
    expect(claimed.has(id)).toBe(false);
    const row = await backend.jobGet({ id });
    expect(row).toMatchObject({
      status: "processing",
      workerId: worker.id,
      attempts: 0,
      interruptions: 0,
      startKnown: false,
    });
    expect(row?.claimToken).toMatch(/^[0-9a-f-]{36}$/);
    expect(row?.startedAt?.getTime()).toBe(row?.createdAt.getTime());
    const done = waitForEvent(soniq, "job_done", (e) => e.job_id === id);
    release?.();
    await done;
    expect(await backend.jobGet({ id })).toMatchObject({ status: "done", attempts: 1 });
    // Drained with nothing left behind.
    expect(await worker.stop()).toMatchObject({ exitCode: 0 });
  });

  it("hand-off › a due backlog in the queue, a paused or a limited queue › queued as usual, never ahead of the backlog", async () => {
    const backend = await openBackend();
    // Due a second ago: SQLite's times are milliseconds, and two enqueues may share one.
    const first = newJob({ queue: "q", runAt: new Date(Date.now() - 1000) });
    await backend.jobEnqueue({ jobs: [first] }); // nobody registered: queued
    const { log } = taker(backend);
    const second = newJob({ queue: "q" });
    expect(await backend.jobEnqueue({ jobs: [second] })).toEqual([
      { id: second.id, inserted: true },
    ]);
    expect(log).toEqual([{ queue: "q", how: "cancel" }]);
    expect(await backend.jobGet({ id: second.id })).toMatchObject({
      status: "queued",
      workerId: null,
      startKnown: true,
    });
    const order = await backend.jobClaim({ workerId: "c", queues: ["q"], limit: 10 });
    expect(order.map((j) => j.id)).toEqual([first.id, second.id]);
    await backend.admin.queueSet({ name: "p", paused: true });
    await backend.admin.queueSet({ name: "m", maxRunning: 5 });
    const paused = newJob({ queue: "p" });
    const limited = newJob({ queue: "m" });
    await backend.jobEnqueue({ jobs: [paused] });
    await backend.jobEnqueue({ jobs: [limited] });
    expect(log.slice(1)).toEqual([
      { queue: "p", how: "cancel" },
      { queue: "m", how: "cancel" },
    ]);
    expect((await backend.jobGet({ id: paused.id }))?.status).toBe("queued");
    expect((await backend.jobGet({ id: limited.id }))?.status).toBe("queued");
  });

  it("hand-off › only future rows or other queues' backlog › handed off, written as a claim writes it, fenced", async () => {
    const backend = await openBackend();
    await backend.jobEnqueue({ jobs: [newJob({ queue: "q", delaySeconds: 3600 })] });
    await backend.jobEnqueue({ jobs: [newJob({ queue: "other" })] });
    const { log } = taker(backend, "w-1");
    const job = newJob({ queue: "q", meta: '{"a":1}', traceContext: "tp" });
    expect(await backend.jobEnqueue({ jobs: [job] })).toEqual([{ id: job.id, inserted: true }]);
    expect(log.map((l) => l.how)).toEqual(["deliver"]);
    const delivered = log[0]?.job;
    expect(delivered).toMatchObject({
      id: job.id,
      name: job.name,
      queue: "q",
      args: "{}",
      attempts: 0,
      interruptions: 0,
      unchargedRecoveries: 0,
      workerId: "w-1",
      meta: '{"a":1}',
      traceContext: "tp",
    });
    const row = await backend.jobGet({ id: job.id });
    expect(row).toMatchObject({
      status: "processing",
      workerId: "w-1",
      claimToken: delivered?.claimToken,
      startKnown: false,
    });
    expect(row?.scheduledAt.getTime()).toBe(row?.createdAt.getTime());
    const owner = (workerId: string) => ({ workerId, claimToken: delivered?.claimToken ?? "" });
    const complete = (workerId: string) =>
      backend.jobComplete({
        id: job.id,
        owner: owner(workerId),
        result: null,
        resultRetentionSeconds: 60,
      });
    expect(await complete("other")).toBe(false);
    expect(await complete("w-1")).toBe(true);
  });

  it(`hand-off › ${HAND_OFF_PROBE_ROWS} queued rows, then one more, none due in the queue › handed off, then queued as usual (the probe is bounded)`, async () => {
    const backend = await openBackend();
    const future = () => newJob({ queue: "later", delaySeconds: 3600 });
    await backend.jobEnqueue({ jobs: Array.from({ length: HAND_OFF_PROBE_ROWS }, future) });
    const { log } = taker(backend);
    const handed = newJob({ queue: "q" });
    await backend.jobEnqueue({ jobs: [handed] });
    expect(log.map((l) => l.how)).toEqual(["deliver"]);
    await backend.jobEnqueue({ jobs: [future(), future()] }); // a batch: no reservation
    const queued = newJob({ queue: "q" });
    await backend.jobEnqueue({ jobs: [queued] });
    expect(log.map((l) => l.how)).toEqual(["deliver", "cancel"]);
    expect((await backend.jobGet({ id: handed.id }))?.status).toBe("processing");
    expect((await backend.jobGet({ id: queued.id }))?.status).toBe("queued");
  });

  it("hand-off › a batch, a delayed job or a run-at time › no reservation is asked for", async () => {
    const backend = await openBackend();
    const { asked } = taker(backend);
    await backend.jobEnqueue({ jobs: [newJob(), newJob()] });
    await backend.jobEnqueue({ jobs: [newJob({ delaySeconds: 5 })] });
    await backend.jobEnqueue({ jobs: [newJob({ runAt: new Date(Date.now() - 1000) })] });
    expect(asked).toEqual([]);
  });

  it("hand-off › a dedup hit › the holder's id, the reservation cancelled, nothing claimed", async () => {
    const backend = await openBackend();
    const holder = newJob({ queue: "q", dedupKey: "k", delaySeconds: 3600 });
    await backend.jobEnqueue({ jobs: [holder] });
    const { log } = taker(backend);
    const again = newJob({ queue: "q", dedupKey: "k" });
    expect(await backend.jobEnqueue({ jobs: [again] })).toEqual([
      { id: holder.id, inserted: false },
    ]);
    expect(log).toEqual([{ queue: "q", how: "cancel" }]);
    expect(await backend.jobGet({ id: again.id })).toBeNull();
  });

  it("hand-off › the database refuses the insert › rejects, the reservation cancelled, nothing written", async () => {
    const backend = await openBackend();
    const taken = newJob({ queue: "later", delaySeconds: 3600 });
    await backend.jobEnqueue({ jobs: [taken] });
    const { log } = taker(backend);
    // The same id again: the primary key refuses the insert.
    const bad = newJob({ id: taken.id, queue: "q" });
    await expect(backend.jobEnqueue({ jobs: [bad] })).rejects.toThrow(/UNIQUE/);
    expect(log).toEqual([{ queue: "q", how: "cancel" }]);
    expect(await backend.jobGet({ id: taken.id })).toMatchObject({
      queue: "later",
      status: "queued",
    });
  });
});
