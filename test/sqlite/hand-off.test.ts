// Hand-off at enqueue on SQLite (contract/hand-off.ts, transactions.ts `insertHandedOff`): a pool
// enqueue of one due job, with an in-process worker idle on its queue, is inserted already claimed
// by that worker, which starts it without a claim; never past a due backlog, never for a paused or
// limited queue, never when more queued rows exist than the probe reads; dedup and a refused
// insert settle the reservation as the ordinary path would.
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { HAND_OFF_PROBE_ROWS } from "../../src/backends/sqlite/transactions.js";
import { Soniq } from "../../src/index.js";
import { newJob } from "../contract/helpers.js";
import { waitForEvent } from "../helpers/events.js";
import { handOffBackendCases, handOffTaker } from "../helpers/hand-off-cases.js";
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

  it("hand-off › a reply delivered after drain start › NACK'd unstarted with a prefetch_released (late_claim) event", async () => {
    const backend = await openBackend();
    let claims = 0;
    const claim = backend.jobClaim.bind(backend);
    vi.spyOn(backend, "jobClaim").mockImplementation(async (params) => {
      const jobs = await claim(params);
      claims += 1; // answered: the worker is idle on its queue
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
    const ran: number[] = [];
    const job = soniq.job({
      name: "ho.late",
      handler: async (args: { n: number }) => {
        ran.push(args.n);
        return args.n;
      },
    });
    const worker = soniq.worker({ concurrency: 2 });
    closers.push(async () => void (await worker.stop()));
    await worker.start();
    await waitFor(() => claims > 0, 5000, "the first claim");
    const released = waitForEvent(soniq, "prefetch_released", () => true, 5000);
    const id = await job.enqueue({ n: 1 });
    // The reply is delivered in a later loop iteration: the drain began before it.
    const stopped = worker.stop();
    expect(await released).toEqual({
      worker_id: worker.id,
      reason: "late_claim",
      job_ids: [id],
      fenced_out: 0,
    });
    expect(await stopped).toMatchObject({ exitCode: 0, released: [] });
    expect(ran).toEqual([]);
    expect(await backend.jobGet({ id })).toMatchObject({
      status: "queued",
      workerId: null,
      attempts: 0,
      interruptions: 0,
    });
  });

  handOffBackendCases(openBackend, { message: expect.stringMatching(/UNIQUE/) });

  it(`hand-off › ${HAND_OFF_PROBE_ROWS} queued rows, then one more, none due in the queue › handed off, then queued as usual (the probe is bounded)`, async () => {
    const backend = await openBackend();
    const future = () => newJob({ queue: "later", delaySeconds: 3600 });
    await backend.jobEnqueue({ jobs: Array.from({ length: HAND_OFF_PROBE_ROWS }, future) });
    const { log } = handOffTaker(backend);
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
});
