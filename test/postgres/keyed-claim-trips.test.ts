// What a PostgreSQL keyed drain sends per claim (issue 28: the keyed drain's throughput beside
// the drain without keys): after a keyed claim that took jobs, the next one runs without the
// "any keyed job queued?" probe; after an ordinary claim statement that found nothing, keyed jobs
// go first and the ordinary statement runs on every DRY_ORDINARY_EVERY-th claim only, and not at
// all while the keyed statement answers that no due job without a key is queued — and a job
// without a key queued meanwhile is still claimed within that many claims. A keyed claim is one
// statement (migration 028's soniq_keyed_claim: the lock and both passes), not BEGIN+lock, the
// pass and COMMIT — also for a store that has taken rate-limited jobs (the next-window read is
// inside it), and inside a limited queue's transaction (the same statement, not the passes).
import pg from "pg";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { DRY_ORDINARY_EVERY } from "../../src/backends/postgres/job-store.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { buildStatements } from "../../src/backends/postgres/sql.js";
import { Soniq } from "../../src/index.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: the keyed claim's round trips", () => {
  const schemas = usePostgresSchemas();
  let backend: PostgresBackend;
  let soniq: Soniq;

  beforeAll(async () => {
    backend = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema: schemas.next(),
      poolSize: 2,
    });
    await backend.setup();
    soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await soniq.close();
  });

  it("20 full claims of keyed jobs › one statement each, one probe and one ordinary claim statement; a job without a key queued meanwhile is claimed within 4 claims", async () => {
    const keyed = soniq.job({
      name: "trips.keyed",
      concurrency: {
        key: (args: { k: number }) => `k${String(args.k).padStart(3, "0")}`,
        limit: 1,
      },
      handler: async () => undefined,
    });
    const plain = soniq.job({ name: "trips.plain", handler: async () => undefined });
    await keyed.enqueueMany(Array.from({ length: 100 }, (_, k) => ({ args: { k } })));
    const sent = { probe: 0, ordinary: 0, keyed: 0, transaction: 0 };
    const clientQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
    vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (
      this: pg.Client,
      ...args: unknown[]
    ) {
      const first = args[0];
      const text = typeof first === "string" ? first : ((first as { text?: string }).text ?? "");
      if (/^(BEGIN|COMMIT|ROLLBACK)\b|pg_advisory_xact_lock/.test(text.trim()))
        sent.transaction += 1;
      if (/soniq_keyed_claim\(/.test(text)) sent.keyed += 1;
      return clientQuery.apply(this, args);
    } as never);
    const query = pg.Pool.prototype.query as (...args: unknown[]) => unknown;
    vi.spyOn(pg.Pool.prototype, "query").mockImplementation(function (
      this: pg.Pool,
      ...args: unknown[]
    ) {
      const first = args[0];
      const text = typeof first === "string" ? first : ((first as { text?: string }).text ?? "");
      if (/^SELECT EXISTS \(SELECT 1 FROM \S+ AS k\b/.test(text)) sent.probe += 1;
      if (/^WITH picked AS/.test(text.trim())) sent.ordinary += 1;
      return query.apply(this, args);
    } as never);
    const claim = () => backend.jobClaim({ workerId: "w1", queues: null, limit: 3 });
    for (let n = 0; n < 20; n++) expect((await claim()).length).toBe(3);
    expect(sent.probe).toBe(1);
    // The first claim's (it runs before any keyed claim); then each keyed statement answers that
    // nothing without a key is due (before: one every DRY_ORDINARY_EVERY-th claim, 5 in 20).
    expect(sent.ordinary).toBe(1);
    expect(DRY_ORDINARY_EVERY).toBe(4);
    // One statement per keyed claim, without a transaction of its own (before migration 020:
    // BEGIN with the lock, the pass and COMMIT, three round trips per keyed claim).
    expect(sent.keyed).toBe(20);
    expect(sent.transaction).toBe(0);

    await plain.enqueue({});
    let within = 0;
    for (let n = 1; n <= DRY_ORDINARY_EVERY && within === 0; n++) {
      if ((await claim()).some((job) => job.name === "trips.plain")) within = n;
    }
    expect(within).toBeGreaterThan(0);
  });

  it("rate-limited keyed claims › one statement each, no transaction, the next window read inside it; a limited queue's keyed part › the same statement inside its transaction", async () => {
    const rated = soniq.job({
      name: "trips.rated",
      rateLimit: { limit: 1, per: 60, key: (args: { k: number }) => `r${args.k}` },
      handler: async () => undefined,
    });
    await rated.enqueueMany(Array.from({ length: 6 }, (_, i) => ({ args: { k: i % 3 } })));
    const sent = { keyed: 0, transaction: 0, passes: 0, limitedKeyed: 0 };
    let inTransaction = false;
    let inLimited = false;
    const clientQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
    vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (
      this: pg.Client,
      ...args: unknown[]
    ) {
      const first = args[0];
      const text = typeof first === "string" ? first : ((first as { text?: string }).text ?? "");
      const trimmed = text.trim();
      if (/^BEGIN\b/.test(trimmed)) inTransaction = true;
      if (/^(COMMIT|ROLLBACK)\b/.test(trimmed)) inTransaction = false;
      if (/^(BEGIN|COMMIT|ROLLBACK)\b|pg_advisory_xact_lock/.test(trimmed) && !inLimited)
        sent.transaction += 1;
      if (/soniq_keyed_claim\(/.test(text)) {
        sent.keyed += 1;
        if (inTransaction) sent.limitedKeyed += 1;
      }
      // The passes and the next-window read, as the transaction before 028 sent them.
      if (/^WITH RECURSIVE|soniq_rate_starts/.test(trimmed)) sent.passes += 1;
      return clientQuery.apply(this, args);
    } as never);
    const claim = (limit: number) =>
      backend.jobClaim({ workerId: "w2", queues: ["default"], limit, names: ["trips.rated"] });
    // 3 keys, one start a minute each: 3 jobs, then none (the windows are full).
    expect((await claim(10)).length).toBe(3);
    expect((await claim(10)).length).toBe(0);
    expect((await claim(10)).length).toBe(0);
    expect(sent).toMatchObject({ transaction: 0, passes: 0, limitedKeyed: 0 });
    expect(sent.keyed).toBeGreaterThanOrEqual(3);

    // A queue with a max_running: its keyed jobs are claimed in its transaction, by the function.
    const limited = soniq.job({
      name: "trips.limited",
      queue: "trips-limited",
      concurrency: { key: (args: { k: number }) => `l${args.k}`, limit: 1 },
      handler: async () => undefined,
    });
    await soniq.queues.set("trips-limited", { maxRunning: 2 });
    await limited.enqueueMany(Array.from({ length: 4 }, (_, i) => ({ args: { k: i } })));
    inLimited = true;
    // The list of limited queues is re-read at most once a second (limited-claim.ts).
    const got = await vi.waitFor(
      async () => {
        const jobs = await backend.jobClaim({
          workerId: "w3",
          queues: ["trips-limited"],
          limit: 10,
          names: ["trips.limited"],
        });
        expect(jobs.length).toBeGreaterThan(0);
        return jobs;
      },
      { timeout: 5000, interval: 100 },
    );
    expect(got.length).toBe(2);
    expect(sent.limitedKeyed).toBe(1);
    expect(sent.passes).toBe(0);
  });

  it("a backlog of keyed jobs, a job without a key due later › no ordinary claim statement after the first in 20 claims; keyed jobs of a limited queue are claimed once the keyed claim comes back short", async () => {
    const own = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema: schemas.next(),
      poolSize: 2,
    });
    await own.setup();
    const app = new Soniq({ backend: own, logger: pino({ level: "silent" }), env: {} });
    try {
      const keyed = app.job({
        name: "solo.keyed",
        concurrency: { key: (args: { k: number }) => `s${args.k}`, limit: 1 },
        handler: async () => undefined,
      });
      const plain = app.job({ name: "solo.plain", handler: async () => undefined });
      const limited = app.job({
        name: "solo.limited",
        queue: "solo-limited",
        concurrency: { key: (args: { k: number }) => `sl${args.k}`, limit: 1 },
        handler: async () => undefined,
      });
      await app.queues.set("solo-limited", { maxRunning: 2 });
      await keyed.enqueueMany(Array.from({ length: 60 }, (_, k) => ({ args: { k } })));
      // Not due for an hour: the answer is about due jobs, what the ordinary statement claims.
      await plain.enqueue({}, { delay: 3600 });
      let ordinary = 0;
      const query = pg.Pool.prototype.query as (...args: unknown[]) => unknown;
      vi.spyOn(pg.Pool.prototype, "query").mockImplementation(function (
        this: pg.Pool,
        ...args: unknown[]
      ) {
        const first = args[0];
        const text = typeof first === "string" ? first : ((first as { text?: string }).text ?? "");
        if (/^WITH picked AS/.test(text.trim())) ordinary += 1;
        return query.apply(this, args);
      } as never);
      const claim = (limit: number) => own.jobClaim({ workerId: "w5", queues: null, limit });
      for (let n = 0; n < 20; n++) expect((await claim(3)).length).toBe(3);
      expect(ordinary).toBe(1);
      await limited.enqueueMany(Array.from({ length: 4 }, (_, k) => ({ args: { k } })));
      // The keyed backlog outside the limited queue is drained (60 jobs, one per key); the
      // claims that come back short (also those told that nothing without a key is due) still
      // serve the limited queue, whose keyed jobs only its
      // claim takes (within its max_running of 2; its list is re-read at most once a second).
      const limitedIds = new Set<string>();
      await vi.waitFor(
        async () => {
          for (const job of await claim(10))
            if (job.name === "solo.limited") limitedIds.add(job.id);
          expect(limitedIds.size).toBe(2);
        },
        { timeout: 5000, interval: 100 },
      );
    } finally {
      await app.close();
    }
  });

  it("the claim statement of jobs without a key, over queued keyed jobs only › reads none of them (migration 027: its index holds rows without a key)", async () => {
    const keyed = soniq.job({
      name: "trips.backlog",
      concurrency: { key: (args: { k: number }) => `b${args.k}`, limit: 1 },
      handler: async () => undefined,
    });
    await keyed.enqueueMany(Array.from({ length: 200 }, (_, k) => ({ args: { k } })));
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query("BEGIN");
      const { rows } = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${buildStatements(backend.schema).claimAll}`,
        ["w4", 100, true, null, null],
      );
      await client.query("ROLLBACK");
      const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
      // Before 027 the walk read every queued keyed row and dropped it by its filter.
      expect(plan).toMatch(
        /Index Scan using soniq_jobs_claim_idx on soniq_jobs cj \(actual rows=0 /,
      );
      const walk = plan.slice(plan.indexOf("Index Scan using soniq_jobs_claim_idx"));
      expect(walk.slice(0, walk.indexOf("CTE claimed"))).not.toContain("Rows Removed by Filter");
    } finally {
      await client.end();
    }
  });
});
