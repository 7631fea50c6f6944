/**
 * Hand-off at enqueue on PostgreSQL (contract/hand-off.ts, src/worker/hand-off.ts): a pool enqueue
 * of one due job, with an in-process worker idle on its queue, inserts the row already claimed by
 * that worker and the worker starts it without a claim; never for a transactional enqueue, never
 * past a due backlog, never while draining; dedup, a drain starting mid-statement and a lost reply
 * are settled as the ordinary paths settle them.
 */
import pg from "pg";
import { pino } from "pino";
import { afterEach, expect, it, vi } from "vitest";
import type {
  ClaimedJob,
  HandOffReservation,
  HandOffTaker,
} from "../../src/backends/contract/index.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { Soniq } from "../../src/index.js";
import { newJob } from "../contract/helpers.js";
import { waitForEvent } from "../helpers/events.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";
import { waitFor } from "../helpers/wait.js";

/** The hand-off statement's text starts with this (hand-off-sql.ts). */
const HAND_OFF_SQL = "WITH gate AS";

describePostgres("postgres: hand-off at enqueue", () => {
  const schemas = usePostgresSchemas("soniq_ho");
  const closers: Array<() => Promise<void>> = [];

  afterEach(async () => {
    vi.restoreAllMocks();
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  async function openBackend(): Promise<PostgresBackend> {
    const backend = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema: schemas.next(),
      poolSize: 4,
    });
    closers.push(() => backend.close());
    await backend.setup();
    return backend;
  }

  async function client(): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await c.connect();
    closers.push(() => c.end());
    return c;
  }

  /** A Soniq on its own schema, a worker, and the ids every jobClaim returned. */
  async function started(
    options: { concurrency?: number; queues?: string[] | null; heartbeatInterval?: number } = {},
  ) {
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
      pollInterval: 0.2,
      heartbeatInterval: options.heartbeatInterval ?? 0.2,
    });
    closers.push(() => soniq.close());
    const gates = new Map<string, () => void>();
    const job = soniq.job({
      name: "ho.job",
      handler: async (args: { gate?: string; n?: number }) => {
        if (args.gate)
          await new Promise<void>((resolve) => gates.set(args.gate as string, resolve));
        return args.n ?? 0;
      },
    });
    const worker = soniq.worker({
      concurrency: options.concurrency ?? 2,
      queues: options.queues === undefined ? null : options.queues,
    });
    closers.push(async () => {
      for (const open of gates.values()) open();
      await worker.stop();
    });
    await worker.start();
    // The claim loop's first claim (empty) has answered: the worker is idle.
    await waitFor(() => answers.count > 0, 5000, "the first claim");
    /** Lets the handler waiting on `gate` return (waits until it is waiting). */
    const open = async (gate: string) => (await waitFor(() => gates.get(gate), 5000, gate))();
    return { backend, soniq, job, worker, claimed, open };
  }

  /** Statements the pool ran whose text starts with `prefix`, from now on. */
  function countStatements(prefix: string): { readonly count: number } {
    const seen = { count: 0 };
    const query = pg.Pool.prototype.query;
    vi.spyOn(pg.Pool.prototype, "query").mockImplementation(function (
      this: pg.Pool,
      ...args: unknown[]
    ) {
      const config = args[0] as { text?: string } | string;
      const text = typeof config === "string" ? config : (config.text ?? "");
      if (text.trimStart().startsWith(prefix)) seen.count += 1;
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof pg.Pool.prototype.query);
    return seen;
  }

  it("hand-off › an idle worker, a pool enqueue of one due job › inserted claimed by the worker and started without a claim, in one statement", async () => {
    const { backend, job, worker, claimed, soniq } = await started();
    const handOffs = countStatements(HAND_OFF_SQL);
    const startedEvent = waitForEvent(soniq, "job_started");
    const id = await job.enqueue({ gate: "g1" });
    const startedPayload = await startedEvent;
    expect(startedPayload.job_id).toBe(id);
    expect(handOffs.count).toBe(1);
    expect(claimed.has(id)).toBe(false);
    // While it runs the row is exactly what a worker's claim writes.
    const row = await backend.jobGet({ id });
    expect(row).toMatchObject({
      status: "processing",
      workerId: worker.id,
      attempts: 0,
      interruptions: 0,
      startKnown: false,
    });
    expect(row?.claimToken).toMatch(/^[0-9a-f-]{36}$/);
    expect(row?.startedAt).toBeInstanceOf(Date);
  });

  it("hand-off › a handed-off and a claimed job › same events, same row and admin view after done", async () => {
    const { backend, job, claimed, soniq, worker, open } = await started({ concurrency: 1 });
    const seen: Array<{ name: string; payload: Readonly<Record<string, unknown>> }> = [];
    soniq.events.onAny((name, payload) => void seen.push({ name, payload }));
    // Handed off: the worker is idle.
    let done = waitForEvent(soniq, "job_done");
    const handed = await job.enqueue({ n: 1 });
    await done;
    // Claimed: enqueued while the worker's one slot is busy, claimed when it frees.
    const busyStarted = waitForEvent(soniq, "job_started");
    const busy = await job.enqueue({ gate: "busy" });
    await busyStarted;
    const viaClaim = await job.enqueue({ n: 2 });
    done = waitForEvent(soniq, "job_done", (e) => e.job_id === viaClaim);
    await open("busy");
    await done;
    expect(claimed.has(handed)).toBe(false);
    expect(claimed.has(viaClaim)).toBe(true);
    expect(claimed.has(busy)).toBe(false); // the slot was free again: handed off too
    const namesOf = (id: string) => seen.filter((e) => e.payload.job_id === id).map((e) => e.name);
    expect(namesOf(handed)).toEqual(namesOf(viaClaim));
    expect(namesOf(handed)).toEqual(["job_enqueued", "job_started", "job_done"]);
    for (const name of ["job_started", "job_done"]) {
      const a = seen.find((e) => e.name === name && e.payload.job_id === handed)?.payload;
      const b = seen.find((e) => e.name === name && e.payload.job_id === viaClaim)?.payload;
      expect(Object.keys(a ?? {}).sort()).toEqual(Object.keys(b ?? {}).sort());
      expect(a).toMatchObject({ worker_id: worker.id, queue: "default", job_name: "ho.job" });
      expect(b).toMatchObject({ worker_id: worker.id, queue: "default", job_name: "ho.job" });
    }
    const rowA = await backend.jobGet({ id: handed });
    const rowB = await backend.jobGet({ id: viaClaim });
    const shape = (row: typeof rowA) =>
      Object.fromEntries(
        Object.entries(row ?? {}).map(([k, v]) => [k, v === null ? null : typeof v]),
      );
    expect(shape(rowA)).toEqual(shape(rowB));
    expect(rowA).toMatchObject({ status: "done", attempts: 1, workerId: worker.id, result: "1" });
    const viewA = await soniq.jobs.get(handed);
    const viewB = await soniq.jobs.get(viaClaim);
    expect(viewA?.status).toBe("done");
    const steps = (view: typeof viewA) =>
      view?.timeline.map((t) => [t.kind, t.attempt, t.workerId]);
    expect(steps(viewA)).toEqual(steps(viewB));
    expect(steps(viewA)?.map(([kind]) => kind)).toContain("started");
  });
});
