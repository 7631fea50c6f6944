// Workers through a real PgBouncer in transaction mode (test/helpers/pgbouncer.ts), configured as
// docs/backends.md says ("PostgreSQL connections"): `soniq setup` through the pooler, real jobs,
// a drain on stop, wake-ups from another instance over `listenUrl` (picked up well under
// `pollInterval`), polling alone without it, and no session setting left on the pooler's
// server connections.
import pg from "pg";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { isSoniqError, Soniq } from "../../src/index.js";
import { describePgBouncer, type PgBouncer, startPgBouncer } from "../helpers/pgbouncer.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { usePostgresSchemas } from "../helpers/postgres-suite.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });

describePgBouncer("worker through pgbouncer (transaction mode)", () => {
  const schemas = usePostgresSchemas("soniq_pgb");
  let bouncer: PgBouncer;
  const opened: Soniq[] = [];
  beforeAll(async () => {
    bouncer = await startPgBouncer();
  });
  afterEach(async () => {
    for (const soniq of opened.splice(0)) await soniq.close().catch(() => undefined);
  });
  afterAll(async () => {
    await bouncer?.stop();
  });

  /** A Soniq instance through the pooler on `schema`. */
  function open(schema: string, extra: Record<string, unknown> = {}): Soniq {
    const soniq = new Soniq({
      databaseUrl: bouncer.url,
      schema,
      pooler: "transaction",
      poolSize: 3,
      logger: silent,
      env: {},
      heartbeatInterval: 0.5,
      ...extra,
    });
    opened.push(soniq);
    return soniq;
  }

  /** Registers `ping` on `soniq`, noting when each job started (ms since the epoch). */
  function pingJob(soniq: Soniq, started: Map<string, number>, work?: () => Promise<void>) {
    return soniq.job({
      name: "ping",
      handler: async (args: { key: string }) => {
        started.set(args.key, Date.now());
        await work?.();
        return args.key;
      },
    });
  }

  /** Enqueues `n` jobs with `ping` (another instance's) one at a time; each pick-up delay in ms. */
  async function pickUps(
    ping: ReturnType<typeof pingJob>,
    started: Map<string, number>,
    n: number,
  ) {
    const delays: number[] = [];
    for (let i = 0; i < n; i++) {
      const key = `k${i}-${Math.random()}`;
      const at = Date.now();
      await ping.enqueue({ key });
      const startedAt = await waitFor(() => started.get(key), 15_000, `job ${key} to start`);
      delays.push(startedAt - at);
    }
    return delays;
  }

  it("sets up through the pooler, runs jobs woken over listenUrl well under pollInterval, and drains on stop", async () => {
    const schema = schemas.next();
    // A poll a minute: a pick-up under the bound below is a wake-up (a poll at a random moment
    // meets it one time in six per job, all five one time in 7,776).
    const pollInterval = 60;
    const consumer = open(schema, { listenUrl: TEST_DATABASE_URL, pollInterval });
    await consumer.setup();
    const started = new Map<string, number>();
    let release: (() => void) | undefined;
    pingJob(consumer, started, async () => {
      if (started.has("slow")) {
        await new Promise<void>((r) => {
          release = r;
        });
      }
    });
    const worker = consumer.worker();
    await worker.start();
    // Another instance (its own pool and notifier) enqueues: only LISTEN can wake the worker
    // before its next poll, up to 60 s away. LISTEN takes milliseconds; the bound leaves the load
    // seconds.
    const producer = open(schema, { pollInterval });
    const ping = pingJob(producer, new Map());
    // The worker's LISTEN connects on its own after start(): a NOTIFY sent before it is in place
    // wakes nobody (that job would wait for the poll, 60 s away; failed once in CI under load), so
    // the pick-ups start once the server shows a session whose last statement LISTENed.
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      await waitFor(
        async () =>
          ((
            await admin.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND query LIKE '%' || $1 || '%'",
              [schema],
            )
          ).rows[0]?.n ?? 0) >= 1,
        15_000,
        "the worker's LISTEN",
      );
    } finally {
      await admin.end();
    }
    const delays = await pickUps(ping, started, 5);
    expect(Math.max(...delays)).toBeLessThan(10_000);
    // The last job started; its completion is written after its handler returns.
    await waitFor(async () => (await producer.stats()).done === 5, 15_000, "five jobs done");

    // A job in flight when stop() begins finishes: drained, exit 0, the worker row stopped.
    const id = await ping.enqueue({ key: "slow" });
    await waitFor(() => release, 15_000, "the slow job to start");
    const exit = worker.stop();
    release?.();
    expect(await exit).toEqual({ reason: "drained", exitCode: 0, released: [] });
    expect(await producer.getJob(id)).toMatchObject({ status: "done", result: "slow" });
    const [row] = await producer.workers();
    expect(row).toMatchObject({ id: worker.id, status: "stopped", live: false });
  });

  it("without listenUrl polls: other instances' jobs start within about one pollInterval", async () => {
    const schema = schemas.next();
    const pollInterval = 0.3;
    const consumer = open(schema, { pollInterval });
    await consumer.setup();
    expect((await consumer.backend()).capabilities.crossProcessWake).toBe(false);
    const started = new Map<string, number>();
    pingJob(consumer, started);
    const worker = consumer.worker();
    await worker.start();
    const producer = open(schema, { pollInterval });
    const delays = await pickUps(pingJob(producer, new Map()), started, 4);
    // A poll every 0.3 s: generous bound for a loaded machine (the claim and the start included).
    expect(Math.max(...delays)).toBeLessThan(5_000);
    expect(await worker.stop()).toMatchObject({ reason: "drained", exitCode: 0 });
    expect(await producer.stats()).toMatchObject({ done: 4 });
  });

  it("transactional enqueue on a client of the pooler: a rolled-back job never exists, a committed one runs", async () => {
    const schema = schemas.next();
    const consumer = open(schema, { listenUrl: TEST_DATABASE_URL, pollInterval: 60 });
    await consumer.setup();
    const started = new Map<string, number>();
    const ping = pingJob(consumer, started);
    const worker = consumer.worker();
    await worker.start();
    const client = new pg.Client({ connectionString: bouncer.url });
    await client.connect();
    try {
      await client.query("BEGIN");
      const dropped = await ping.enqueue({ key: "rolled-back" }, { connection: client });
      await client.query("ROLLBACK");
      await client.query("BEGIN");
      const at = Date.now();
      const kept = await ping.enqueue({ key: "committed" }, { connection: client });
      await client.query("COMMIT");
      const startedAt = await waitFor(() => started.get("committed"), 15_000, "the committed job");
      // Woken by the commit's NOTIFY over listenUrl (milliseconds), not the poll up to 60 s away.
      expect(startedAt - at).toBeLessThan(10_000);
      expect(await consumer.getJob(dropped)).toBeNull();
      await waitFor(async () => (await consumer.getJob(kept))?.status === "done");
      expect(started.has("rolled-back")).toBe(false);
    } finally {
      await client.end();
    }
    expect(await worker.stop()).toMatchObject({ reason: "drained", exitCode: 0 });
  });

  it('without pooler: "transaction", prepared statements fail with DATABASE_ERROR naming the setting', async () => {
    // Two server connections for eight clients: statements move between them.
    const small = await startPgBouncer({ poolSize: 2 });
    const schema = schemas.next();
    const backends = [0, 1].map(
      () => new PostgresBackend({ connectionString: small.url, schema, poolSize: 4 }),
    );
    try {
      await backends[0]?.setup();
      let failure: unknown;
      for (let round = 0; round < 100 && failure === undefined; round++) {
        const answers = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) => backends[i % 2]?.jobStats()),
        );
        failure = answers.find((a) => a.status === "rejected")?.reason;
      }
      expect(isSoniqError(failure, "DATABASE_ERROR")).toBe(true);
      expect(String((failure as Error).message)).toMatch(
        /prepared statement.*pooler: "transaction"/,
      );
    } finally {
      for (const b of backends) await b.close().catch(() => undefined);
      await small.stop();
    }
  });

  it("leaves no session setting on the pooler's server connections", async () => {
    const schema = schemas.next();
    const soniq = open(schema, { listenUrl: TEST_DATABASE_URL });
    await soniq.setup();
    pingJob(soniq, new Map());
    await soniq.enqueue("ping", { key: "a" });
    expect(await soniq.stats()).toMatchObject({ queued: 1 });
    // Every server connection of the pooler (8), each held by a transaction of its own at once.
    const clients = Array.from(
      { length: 8 },
      () => new pg.Client({ connectionString: bouncer.url }),
    );
    try {
      await Promise.all(clients.map((c) => c.connect()));
      const settings = await Promise.all(
        clients.map(async (c) => {
          await c.query("BEGIN");
          const { rows } = await c.query<{ bitmap: string; cost: string }>(
            "SELECT current_setting('enable_bitmapscan') AS bitmap, current_setting('random_page_cost') AS cost, pg_sleep(0.1)",
          );
          await c.query("COMMIT");
          return rows[0];
        }),
      );
      for (const s of settings) expect(s).toMatchObject({ bitmap: "on", cost: "4" });
    } finally {
      await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    }
  });
});
