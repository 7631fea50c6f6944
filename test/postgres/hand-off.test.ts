/**
 * Hand-off at enqueue on PostgreSQL (contract/hand-off.ts, src/worker/hand-off.ts): a pool enqueue
 * of one due job, with an in-process worker idle on its queue, inserts the row already claimed by
 * that worker and the worker starts it without a claim; never for a transactional enqueue, never
 * past a due backlog, never while draining; dedup, a drain starting mid-statement and a lost reply
 * are settled as the ordinary paths settle them.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { pino } from "pino";
import { afterEach, expect, it, vi } from "vitest";
import { buildHandOffStatements } from "../../src/backends/postgres/hand-off-sql.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { SESSION_SETUP } from "../../src/backends/postgres/sql.js";
import { Soniq } from "../../src/index.js";
import { newJob } from "../contract/helpers.js";
import { waitForEvent } from "../helpers/events.js";
import { handOffBackendCases, handOffTaker } from "../helpers/hand-off-cases.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";
import { waitFor } from "../helpers/wait.js";

/** The child of the signal test: a worker that also enqueues. */
const processScript = fileURLToPath(new URL("./hand-off-process.ts", import.meta.url));

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
    const claimsInFlight = { count: 0 };
    vi.spyOn(backend, "jobClaim").mockImplementation(async (params) => {
      claimsInFlight.count += 1;
      try {
        const jobs = await claim(params);
        for (const job of jobs) claimed.add(job.id);
        answers.count += 1;
        return jobs;
      } finally {
        claimsInFlight.count -= 1;
      }
    });
    const soniq = new Soniq({
      backend,
      logger: pino({ level: "silent" }),
      env: {},
      // Claims come only from wake-ups and freed slots: a poll's claim never races a hand-off.
      pollInterval: 5,
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
    const listening = { seen: false };
    backend.notifier.subscribe((queue) => {
      if (queue === "*") listening.seen = true;
    });
    await worker.start();
    // The claim loop's first claim (empty) has answered, and so has the one its LISTEN's
    // wake-up of every queue ("*") starts: the worker is idle.
    await waitFor(() => answers.count > 0, 5000, "the first claim");
    await waitFor(() => listening.seen, 10_000, "the LISTEN");
    await new Promise((r) => setTimeout(r, 50));
    await waitFor(() => claimsInFlight.count === 0, 5000, "no claim in flight");
    /** Lets the handler waiting on `gate` return (waits until it is waiting). */
    const open = async (gate: string) => (await waitFor(() => gates.get(gate), 5000, gate))();
    /** Waits until no claim is in flight (a freed slot's claim has answered): the worker is idle. */
    const idle = async () => {
      await new Promise((r) => setImmediate(r));
      await waitFor(() => claimsInFlight.count === 0, 5000, "no claim in flight");
    };
    return { backend, soniq, job, worker, claimed, open, claimsInFlight, idle };
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
    const { backend, job, claimed, soniq, worker, open, idle } = await started({
      concurrency: 1,
    });
    const seen: Array<{ name: string; payload: Readonly<Record<string, unknown>> }> = [];
    soniq.events.onAny((name, payload) => void seen.push({ name, payload }));
    // Handed off: the worker is idle.
    let done = waitForEvent(soniq, "job_done");
    const handed = await job.enqueue({ n: 1 });
    await done;
    await idle();
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

  /**
   * The server process id of a hand-off statement waiting for a lock, once there is one (read on a
   * connection of its own: pg_stat_activity is a snapshot per transaction).
   */
  async function blockedHandOff(schema: string): Promise<number> {
    const watcher = await client();
    // Only this test's schema: files run in parallel on one server, and this pid gets killed.
    return waitFor(async () => {
      const { rows } = await watcher.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1
           AND strpos(query, $2) > 0`,
        [`${HAND_OFF_SQL}%`, `"${schema}"`],
      );
      return rows[0]?.pid;
    });
  }

  handOffBackendCases(openBackend, { code: "23505" });

  it("hand-off › a transactional enqueue › no reservation is asked for", async () => {
    const backend = await openBackend();
    const { asked } = handOffTaker(backend);
    const c = await client();
    await c.query("BEGIN");
    await backend.jobEnqueue({ jobs: [newJob()], connection: c });
    await c.query("COMMIT");
    expect(asked).toEqual([]);
  });

  it("hand-off › a hand-off statement killed before it committed › the reservation is lost, no row exists, nothing runs", async () => {
    const backend = await openBackend();
    const { log } = handOffTaker(backend);
    const c = await client();
    // An uncommitted holder of the key: the hand-off insert waits on it.
    await c.query("BEGIN");
    await backend.jobEnqueue({
      jobs: [newJob({ dedupKey: "k", delaySeconds: 3600 })],
      connection: c,
    });
    const job = newJob({ dedupKey: "k" });
    const pending = backend.jobEnqueue({ jobs: [job] });
    pending.catch(() => undefined); // it rejects during the awaits below, before the expect
    const pid = await blockedHandOff(backend.schema);
    const killer = await client();
    await killer.query("SELECT pg_terminate_backend($1)", [pid]);
    await expect(pending).rejects.toBeDefined();
    await c.query("ROLLBACK");
    expect(log.map((l) => l.how)).toEqual(["lost"]);
    expect(await backend.jobGet({ id: job.id })).toBeNull();
  });

  it("hand-off › a real worker's hand-off statement killed before it committed › the enqueue rejects, nothing runs, the next enqueue is handed off", async () => {
    const { backend, job, claimed, soniq, idle } = await started({ concurrency: 1 });
    const starts: string[] = [];
    soniq.events.on("job_started", (e) => void starts.push(e.job_id));
    const c = await client();
    // An uncommitted holder of the key: the hand-off insert waits on it until it is killed.
    await c.query("BEGIN");
    await backend.jobEnqueue({
      jobs: [newJob({ name: "ho.job", dedupKey: "k", delaySeconds: 3600 })],
      connection: c,
    });
    const reserve = vi.spyOn(backend.handOff, "reserve");
    const pending = job.enqueue({ n: 1 }, { dedupKey: "k" });
    pending.catch(() => undefined); // it rejects during the awaits below, before the expect
    const pid = await blockedHandOff(backend.schema);
    expect(reserve.mock.results.some((r) => r.value !== undefined)).toBe(true);
    const killer = await client();
    await killer.query("SELECT pg_terminate_backend($1)", [pid]);
    await expect(pending).rejects.toBeDefined();
    await c.query("ROLLBACK");
    // Nothing was committed: no row at all, so nothing can ever run (the lost reply's orphan
    // release finds nothing of ours either).
    expect((await backend.jobStats()).total).toBe(0);
    expect(starts).toEqual([]);
    // The reservation was settled: the slot is free and the next enqueue is handed off.
    await idle();
    const done = waitForEvent(soniq, "job_done");
    const next = await job.enqueue({ n: 2 });
    expect((await done).job_id).toBe(next);
    expect(claimed.has(next)).toBe(false);
    expect(starts).toEqual([next]);
  });

  it("hand-off › a transactional enqueue, rolled back then committed › never handed off; the rolled-back job never runs", async () => {
    const { backend, job, claimed, soniq } = await started();
    const reserve = vi.spyOn(backend.handOff, "reserve");
    const c = await client();
    let ran = 0;
    soniq.events.on("job_started", () => void ran++);
    await c.query("BEGIN");
    const rolledBack = await job.enqueue({ n: 1 }, { connection: c });
    await c.query("ROLLBACK");
    await c.query("BEGIN");
    const committed = await job.enqueue({ n: 2 }, { connection: c });
    const done = waitForEvent(soniq, "job_done", (e) => e.job_id === committed);
    await c.query("COMMIT");
    await done;
    expect(reserve).not.toHaveBeenCalled();
    expect(claimed.has(committed)).toBe(true);
    expect(await backend.jobGet({ id: rolledBack })).toBeNull();
    expect(ran).toBe(1);
  });

  it("hand-off › a dedup hit at a worker with one slot › the slot is free again: the next enqueue is handed off", async () => {
    const { backend, job, claimed, soniq, idle } = await started({ concurrency: 1 });
    const holder = await job.enqueue({ n: 1 }, { dedupKey: "k", delay: 3600 });
    expect(await job.enqueue({ n: 2 }, { dedupKey: "k" })).toBe(holder);
    // Its cancel freed the one slot, which wakes the claim loop (it may have been kept from a
    // claim by the reservation): wait until that claim has answered, so the worker is idle again.
    await idle();
    const done = waitForEvent(soniq, "job_done");
    const next = await job.enqueue({ n: 3 });
    expect((await done).job_id).toBe(next);
    expect(claimed.has(next)).toBe(false);
    expect(await backend.jobGet({ id: holder })).toMatchObject({
      status: "queued",
      workerId: null,
    });
  });

  it("hand-off › a draining worker › no reservation: the job stays queued for other workers", async () => {
    const { backend, job, worker, soniq, open } = await started({ concurrency: 2 });
    const running = waitForEvent(soniq, "job_started");
    await job.enqueue({ gate: "long" });
    await running;
    const stopped = worker.stop("SIGTERM");
    expect(worker.state).toBe("DRAINING");
    const reserve = vi.spyOn(backend.handOff, "reserve");
    const id = await job.enqueue({ n: 1 });
    await open("long");
    expect((await stopped).exitCode).toBe(0);
    expect(reserve.mock.results.every((r) => r.value === undefined)).toBe(true);
    expect(await backend.jobGet({ id })).toMatchObject({ status: "queued", workerId: null });
  });

  it("hand-off › a drain starting while the hand-off statement runs › the handed row is NACK'd unstarted, attempts untouched, exit 0", async () => {
    const { backend, job, worker, soniq } = await started();
    let ran = 0;
    soniq.events.on("job_started", () => void ran++);
    const c = await client();
    // An uncommitted holder of the key makes the hand-off insert wait; its rollback lets it in.
    await c.query("BEGIN");
    await backend.jobEnqueue({ jobs: [newJob({ name: "ho.job", dedupKey: "k" })], connection: c });
    const pending = job.enqueue({ n: 1 }, { dedupKey: "k" });
    await blockedHandOff(backend.schema);
    const stopped = worker.stop("SIGTERM");
    await c.query("ROLLBACK");
    const id = await pending;
    const exit = await stopped;
    expect(exit).toMatchObject({ exitCode: 0, reason: "drained", released: [] });
    expect(ran).toBe(0);
    expect(await backend.jobGet({ id })).toMatchObject({
      status: "queued",
      workerId: null,
      claimToken: null,
      attempts: 0,
      interruptions: 0,
      lastError: null,
    });
  });

  it("hand-off › the reply of a committed hand-off is lost › the enqueue rejects; orphan release frees the row, which then runs once", async () => {
    const { backend, job, soniq, claimed } = await started({ heartbeatInterval: 0.1 });
    const query = pg.Pool.prototype.query;
    let lose = true;
    vi.spyOn(pg.Pool.prototype, "query").mockImplementation(function (
      this: pg.Pool,
      ...args: unknown[]
    ) {
      const config = args[0] as { text?: string } | string;
      const text = typeof config === "string" ? config : (config.text ?? "");
      const result = (query as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      if (!lose || !text.startsWith(HAND_OFF_SQL)) return result;
      lose = false;
      // Committed by the server; the answer never reaches us.
      return result.then(() => {
        throw Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
      });
    } as typeof pg.Pool.prototype.query);
    const runs: string[] = [];
    soniq.events.on("job_started", (e) => void runs.push(e.job_id));
    const done = waitForEvent(soniq, "job_done", () => true, 20_000);
    await expect(job.enqueue({ n: 7 })).rejects.toThrow("ECONNRESET");
    const { job_id: id } = await done;
    expect(runs).toEqual([id]);
    // Released by the orphan release (NACK), then claimed like any queued job.
    expect(claimed.has(id)).toBe(true);
    expect(await backend.jobGet({ id })).toMatchObject({
      status: "done",
      attempts: 1,
      interruptions: 0,
    });
  });

  it("hand-off › a handed-off row › wakes no other process; a queued one does", async () => {
    const { backend, job, soniq } = await started({ queues: ["default"] });
    const other = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema: backend.schema,
      poolSize: 1,
    });
    closers.push(() => other.close());
    const woke: string[] = [];
    other.notifier.subscribe((queue) => woke.push(queue));
    // Wait until the other process LISTENs: a queued job (delayed, then due) wakes it.
    await waitFor(async () => {
      await backend.jobEnqueue({ jobs: [newJob({ queue: "probe", name: "x.probe" })] });
      await new Promise((r) => setTimeout(r, 50));
      return woke.includes("probe");
    });
    woke.length = 0;
    const done = waitForEvent(soniq, "job_done");
    await job.enqueue({ n: 1 });
    await done;
    await backend.jobEnqueue({ jobs: [newJob({ queue: "probe", name: "x.probe" })] });
    await waitFor(() => woke.includes("probe"));
    expect(woke).not.toContain("default");
  });

  it("hand-off › the statement's plan after a fill with realistic statistics › the backlog probe walks the queue index, no sequential scan of soniq_jobs", async () => {
    const backend = await openBackend();
    const c = await client();
    const jobs = `"${backend.schema}".soniq_jobs`;
    // 20,000 rows: queued in another queue, processing ones in this one; then ANALYZE.
    await c.query(
      `INSERT INTO ${jobs} (id, name, queue, args, max_attempts, status, scheduled_at, worker_id)
       SELECT gen_random_uuid(), 'x', CASE WHEN i % 4 = 0 THEN 'q' ELSE 'other' END, '{}', 1,
              CASE WHEN i % 4 = 0 THEN 'processing' ELSE 'queued' END, now(),
              CASE WHEN i % 4 = 0 THEN 'w0' END
       FROM generate_series(1, 20000) AS i`,
    );
    await c.query(`ANALYZE ${jobs}`);
    await c.query(SESSION_SETUP);
    const statement = buildHandOffStatements(backend.schema).enqueueHandOff;
    await c.query(
      `PREPARE hand_off(uuid, text, text, text, int, int, text, text, text, text, int) AS ${statement}`,
    );
    for (const mode of ["force_custom_plan", "force_generic_plan"]) {
      await c.query(`SET plan_cache_mode = ${mode}`);
      const { rows } = await c.query<{ "QUERY PLAN": string }>(
        `EXPLAIN (COSTS OFF) EXECUTE hand_off(gen_random_uuid(), 'x', 'q', '{}', 0, 1, NULL, NULL, NULL, 'w', 1)`,
      );
      const text = rows.map((row) => row["QUERY PLAN"]).join("\n");
      expect(text, mode).not.toMatch(/Seq Scan on soniq_jobs/);
      expect(text, mode).toMatch(
        /Index (Only )?Scan using soniq_jobs_queue_claim_idx on soniq_jobs b\s+Index Cond: \(\(queue >= /,
      );
      expect(text, mode).not.toContain("soniq_jobs_claim_idx");
      // The keyed rows' probe (migration 027) reads its own index, keyed rows only.
      expect(text, mode).toMatch(
        /Index (Only )?Scan using soniq_jobs_keyed_queue_idx on soniq_jobs k/,
      );
    }
  });

  it("hand-off › a due keyed job queued in the queue › declined (the job is queued), as for a job without a key; a keyed job of another queue or not due yet › handed off", async () => {
    // Since migration 027 the queue index holds rows without a key only; the statement asks
    // soniq_jobs_keyed_queue_idx for keyed ones, so a due keyed job still closes its queue.
    const backend = await openBackend();
    const c = await client();
    const jobs = `"${backend.schema}".soniq_jobs`;
    const statement = buildHandOffStatements(backend.schema).enqueueHandOff;
    const handOff = async (queue: string) => {
      const { rows } = await c.query<{ handed: boolean }>(statement, [
        randomUUID(),
        "x",
        queue,
        "{}",
        0,
        1,
        null,
        null,
        null,
        "w",
        1,
      ]);
      return rows[0]?.handed;
    };
    const keyed = (queue: string, delay: string) =>
      c.query(
        `INSERT INTO ${jobs} (id, name, queue, args, max_attempts, scheduled_at, meta)
         VALUES (gen_random_uuid(), 'k', $1, '{}', 1, now() + $2::interval,
                 '{"concurrency":{"key":"t1","limit":1}}')`,
        [queue, delay],
      );
    await keyed("later", "1 hour");
    await keyed("other", "0 seconds");
    expect(await handOff("later")).toBe(true);
    await keyed("q", "0 seconds");
    expect(await handOff("q")).toBe(false);
    expect(await handOff("elsewhere")).toBe(true);
  });

  it("hand-off › SIGTERM to a process whose hand-off statement is still running › the handed row is NACK'd unstarted and the process exits 0", async () => {
    const backend = await openBackend();
    const c = await client();
    // An uncommitted holder of the key: the child's hand-off insert waits on it.
    await c.query("BEGIN");
    await backend.jobEnqueue({
      jobs: [newJob({ name: "h.job", queue: "h", dedupKey: "k", delaySeconds: 3600 })],
      connection: c,
    });
    const child = spawn(
      process.execPath,
      ["--import", "tsx", processScript, TEST_DATABASE_URL, backend.schema],
      { stdio: ["pipe", "ignore", "pipe"] },
    );
    closers.push(async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) =>
      child.on("exit", (code) => resolve(code)),
    );
    await waitFor(() => stderr.includes("ready"), 20_000, "the child's worker");
    child.stdin?.write("enqueue\n");
    await blockedHandOff(backend.schema).catch((err: unknown) => {
      throw new Error(`${String(err)}; child: ${stderr}`);
    });
    child.kill("SIGTERM");
    // The drain has begun (the worker row says so) before the hand-off's reply can arrive.
    await waitFor(async () => {
      const workers = await backend.workerList({ heartbeatTimeoutSeconds: 60 });
      return workers.some((w) => w.status === "draining");
    });
    await c.query("ROLLBACK");
    expect(await exited).toBe(0);
    const id = /enqueued (\S+)/.exec(stderr)?.[1];
    expect(id, stderr).toBeDefined();
    expect(stderr).not.toContain("ran ");
    expect(stderr).toContain("exit 0");
    expect(await backend.jobGet({ id: id ?? "" })).toMatchObject({
      status: "queued",
      workerId: null,
      attempts: 0,
      interruptions: 0,
    });
  }, 60_000);
});
