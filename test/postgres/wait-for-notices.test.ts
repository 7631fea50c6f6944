/**
 * `waitFor` / `enqueue(…).result()` on PostgreSQL learns of a job's end from the finishing
 * statement's notice (migration 021, src/backends/postgres/finish-notices.ts): while the job waits
 * nothing is read — the waiting instance's pool runs no statement at all — and the result arrives
 * once another instance (its own pool, as another process would have) finishes the job. Timeout
 * and abort reject with coded errors and leave no registration behind; many waits share the
 * instance's LISTEN connection. Through PgBouncer (transaction mode) the notice comes over
 * `listenUrl`; without one the wait reads at its bounded interval.
 */
import pg from "pg";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { PgNotifier } from "../../src/backends/postgres/notifier.js";
import type { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { isSoniqError, Soniq } from "../../src/index.js";
import { describePgBouncer, type PgBouncer, startPgBouncer } from "../helpers/pgbouncer.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });
const opened: Soniq[] = [];
const workers: Array<ReturnType<Soniq["worker"]>> = [];
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop().catch(() => undefined);
  for (const soniq of opened.splice(0)) await soniq.close().catch(() => undefined);
});

/** Starts a worker of `soniq` (stopped after the test). */
async function startWorker(soniq: Soniq): Promise<void> {
  const worker = soniq.worker();
  workers.push(worker);
  await worker.start();
}

/** An instance on `schema`; `via` the pool's URL and pooler settings (default: direct). */
function open(schema: string, via: Record<string, unknown> = {}): Soniq {
  const soniq = new Soniq({
    databaseUrl: TEST_DATABASE_URL,
    schema,
    poolSize: 3,
    logger: silent,
    env: {},
    pollInterval: 0.1,
    ...via,
  });
  opened.push(soniq);
  return soniq;
}

/** `render` on `soniq`: returns `{ page }` (the job waits for nothing). */
function renderJob(soniq: Soniq) {
  return soniq.job({
    name: "pages.render",
    handler: async (args: { page: number }) => ({ page: args.page }),
  });
}

/** Counts the statements `soniq`'s pool runs (every store call goes through `pool.query`). */
async function countStatements(
  soniq: Soniq,
): Promise<{ backend: PostgresBackend; n: () => number }> {
  const backend = (await soniq.backend()) as PostgresBackend;
  const pool = (backend as unknown as { conn: { pool: pg.Pool } }).conn.pool;
  let n = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
    n += 1;
    return query(...args);
  };
  return { backend, n: () => n };
}

/** Rows left in soniq_job_waits of `schema`. */
async function waitRows(schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${schema}".soniq_job_waits`,
    );
    return rows[0]?.n ?? -1;
  } finally {
    await client.end();
  }
}

/**
 * The shared case: `waiter` waits for a job no worker runs yet; over `quietMs` its pool runs
 * `expectIdle` statements (0 with a notice, more when it reads at an interval); then `runner` (its
 * own pool) starts a worker and the wait resolves with the result, leaving no registration.
 */
async function waitAcross(
  schema: string,
  waiter: Soniq,
  runner: Soniq,
  expectIdle: "none" | "reads",
): Promise<void> {
  const render = renderJob(waiter);
  renderJob(runner);
  const { backend, n } = await countStatements(waiter);
  const job = render.enqueue({ page: 7 });
  const id = await job;
  let settled = false;
  const result = job.result({ timeout: 60 }).finally(() => {
    settled = true;
  });
  if (expectIdle === "none") {
    await waitFor(
      () => backend.finishNotices.size === 1 && (backend.notifier as PgNotifier).listening,
      15_000,
      "the wait registered and LISTEN in place",
    );
  }
  // Past the registration and the first read (and, with a notice, the re-read LISTEN's arrival
  // asks for): from here on a polling wait reads every 50 ms to 1 s.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const before = n();
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const during = n() - before;
  if (expectIdle === "none") expect(during, "statements while the job waited").toBe(0);
  else expect(during, "reads while the job waited").toBeGreaterThanOrEqual(2);
  expect(settled).toBe(false);
  await startWorker(runner);
  const started = Date.now();
  const page: { page: number } = await result;
  expect(page).toEqual({ page: 7 });
  expect(Date.now() - started).toBeLessThan(30_000);
  expect(backend.finishNotices.size).toBe(0);
  expect(await waitRows(schema)).toBe(0);
  expect((await waiter.jobs.get(id))?.status).toBe("done");
}

describePostgres("waitFor on PostgreSQL: finish notices", () => {
  const schemas = usePostgresSchemas("soniq_waitn");

  async function fresh(): Promise<string> {
    const schema = schemas.next();
    await open(schema).setup();
    return schema;
  }

  it("waitFor › a job another instance finishes › no statement while it waits (notice, not polling), its typed result, no registration left", async () => {
    const schema = await fresh();
    await waitAcross(schema, open(schema), open(schema), "none");
  }, 90_000);

  it("waitFor › the job finished by a worker of the same instance (its own pool's NOTIFY) › the notice still reaches the wait", async () => {
    const schema = await fresh();
    const soniq = open(schema);
    const render = renderJob(soniq);
    const backend = (await soniq.backend()) as PostgresBackend;
    const job = render.enqueue({ page: 3 });
    const result = job.result({ timeout: 60 });
    await waitFor(
      () => backend.finishNotices.size === 1 && (backend.notifier as PgNotifier).listening,
      15_000,
      "the wait registered and LISTEN in place",
    );
    // The finishing statement runs on this instance's pool, whose NOTIFYs the listener skips as
    // wake-ups; a finish notice is routed before that skip. No polling would end this wait.
    await startWorker(soniq);
    expect(await result).toEqual({ page: 3 });
    expect(await waitRows(schema)).toBe(0);
  }, 60_000);

  it("waitFor › a timeout or an abort › WAIT_TIMEOUT / WAIT_ABORTED (the reason as cause), the registration and listener released, the job untouched; the instance closed › CLOSED", async () => {
    const schema = await fresh();
    const soniq = open(schema);
    const render = renderJob(soniq);
    const backend = (await soniq.backend()) as PostgresBackend;
    const job = render.enqueue({ page: 1 });
    const started = Date.now();
    const timedOut = await job.result({ timeout: 0.5 }).catch((e: unknown) => e);
    expect(isSoniqError(timedOut, "WAIT_TIMEOUT"), String(timedOut)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(490);
    expect(backend.finishNotices.size).toBe(0);
    expect(await waitRows(schema)).toBe(0);

    const controller = new AbortController();
    const reason = new Error("request closed");
    const waiting = job.result({ signal: controller.signal }).catch((e: unknown) => e);
    await waitFor(() => backend.finishNotices.size === 1, 15_000, "the wait registered");
    controller.abort(reason);
    const aborted = await waiting;
    expect(isSoniqError(aborted, "WAIT_ABORTED"), String(aborted)).toBe(true);
    expect((aborted as Error).cause).toBe(reason);
    expect(backend.finishNotices.size).toBe(0);
    await waitFor(async () => (await waitRows(schema)) === 0, 10_000, "the row released");
    expect((await soniq.jobs.get(await job))?.status).toBe("queued");

    // A wait in progress when the instance closes ends with CLOSED, not never.
    const pending = job.result().catch((e: unknown) => e);
    await waitFor(() => backend.finishNotices.size === 1, 15_000, "the wait registered");
    await soniq.close();
    const closed = await pending;
    expect(isSoniqError(closed, "CLOSED"), String(closed)).toBe(true);
  }, 60_000);

  it("waitFor › a timeout longer than a Node.js timer holds (30 days > 2^31 ms) › still no statement while it waits (no 1 ms re-read loop), then the end", async () => {
    const schema = await fresh();
    const soniq = open(schema);
    const render = renderJob(soniq);
    const { backend, n } = await countStatements(soniq);
    const id = await render.enqueue({ page: 2 });
    const waiting = soniq.jobs.waitFor(id, { timeout: 30 * 86_400 }).catch((e: unknown) => e);
    await waitFor(
      () => backend.finishNotices.size === 1 && (backend.notifier as PgNotifier).listening,
      15_000,
      "the wait registered and LISTEN in place",
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = n();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(n() - before, "statements while the job waited").toBe(0);
    await soniq.jobs.cancel(id);
    const ended = await waiting;
    expect(isSoniqError(ended, "JOB_CANCELLED"), String(ended)).toBe(true);
    expect(await waitRows(schema)).toBe(0);
  }, 60_000);

  it("waitFor › dependants (workflows, migration 019) › a finish both releases its dependant and notifies; a dependant dead-lettered or cancelled by the finishing statement's trigger notifies its waiter too", async () => {
    const schema = await fresh();
    const waiter = open(schema);
    const runner = open(schema);
    const define = (soniq: Soniq) => ({
      source: soniq.job({
        name: "wf.source",
        maxAttempts: 1,
        handler: async (args: { fail: boolean }) => {
          if (args.fail) throw new Error("source failed");
          return "source";
        },
      }),
      next: soniq.job({ name: "wf.next", handler: async () => "next" }),
    });
    const { source, next } = define(waiter);
    define(runner);
    const ok = await source.enqueue({ fail: false });
    const released = next.enqueue({}, { after: [ok] });
    const bad = await source.enqueue({ fail: true });
    const failed = next.enqueue({}, { after: [bad] });
    const cancelled = next.enqueue({}, { after: [bad], onDependencyFailure: "cancel" });
    const outcome = (job: ReturnType<typeof next.enqueue>) =>
      job.result({ timeout: 60 }).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
    const waits = [released, failed, cancelled].map(outcome);
    const backend = (await waiter.backend()) as PostgresBackend;
    // Registered and listening before anything runs: only a notice can end these waits (a
    // listening wait reads again on its notice, not at an interval).
    await waitFor(
      () => backend.finishNotices.size === 3 && (backend.notifier as PgNotifier).listening,
      15_000,
      "three waits registered and LISTEN in place",
    );
    await startWorker(runner);
    const [r, f, c] = await Promise.all(waits);
    expect(r).toEqual({ value: "next" });
    expect(isSoniqError((f as { error: unknown }).error, "JOB_FAILED"), String(f)).toBe(true);
    expect((await runner.getDeadLetter(await failed))?.reason).toBe("dependency_failed");
    expect(isSoniqError((c as { error: unknown }).error, "JOB_CANCELLED"), String(c)).toBe(true);
    expect(backend.finishNotices.size).toBe(0);
    expect(await waitRows(schema)).toBe(0);
  }, 90_000);

  it("waitFor › 40 waits at once, jobs finished by another instance as they register › every result, one LISTEN connection, nothing left", async () => {
    const schema = await fresh();
    const waiter = open(schema);
    const runner = open(schema, { concurrency: 8 });
    const render = renderJob(waiter);
    renderJob(runner);
    await startWorker(runner);
    const jobs = Array.from({ length: 40 }, (_, page) => render.enqueue({ page }));
    const results = await Promise.all(jobs.map((job) => job.result({ timeout: 60 })));
    expect(results).toEqual(Array.from({ length: 40 }, (_, page) => ({ page })));
    const backend = (await waiter.backend()) as PostgresBackend;
    expect(backend.finishNotices.size).toBe(0);
    expect(await waitRows(schema)).toBe(0);
    // The waiter's LISTEN connection is its one connection outside the pool.
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1",
        [`LISTEN "soniq_${schema}"`],
      );
      // The waiter's and the runner's (its worker subscribes to wake-ups).
      expect(rows[0]?.n).toBe(2);
    } finally {
      await client.end();
    }
  }, 90_000);
});

describePgBouncer("waitFor through PgBouncer (transaction mode)", () => {
  const schemas = usePostgresSchemas("soniq_waitb");
  let bouncer: PgBouncer;
  beforeAll(async () => {
    bouncer = await startPgBouncer();
  });
  afterAll(async () => {
    await bouncer?.stop();
  });

  const pooled = (listenUrl?: string) => ({
    databaseUrl: bouncer.url,
    pooler: "transaction",
    ...(listenUrl ? { listenUrl } : {}),
  });

  describe("with listenUrl", () => {
    it("waitFor › through the pooler, LISTEN direct › the notice over listenUrl: no statement while it waits, then the result", async () => {
      const schema = schemas.next();
      await open(schema, pooled(TEST_DATABASE_URL)).setup();
      await waitAcross(
        schema,
        open(schema, pooled(TEST_DATABASE_URL)),
        open(schema, pooled(TEST_DATABASE_URL)),
        "none",
      );
    }, 90_000);
  });

  describe("without listenUrl", () => {
    it("waitFor › through the pooler, no LISTEN › reads at its interval, then the result", async () => {
      const schema = schemas.next();
      await open(schema, pooled()).setup();
      await waitAcross(schema, open(schema, pooled()), open(schema, pooled()), "reads");
    }, 90_000);
  });
});
