// What a PostgreSQL keyed drain sends per claim (issue 28: the keyed drain's throughput beside
// the drain without keys): after a keyed claim that took jobs, the next one runs without the
// "any keyed job queued?" probe; after an ordinary claim statement that found nothing, keyed jobs
// go first and the ordinary statement runs on every DRY_ORDINARY_EVERY-th claim only — and a job
// without a key queued meanwhile is still claimed within that many claims. A keyed claim is one
// statement (migration 020's soniq_keyed_claim: the lock and both passes), not BEGIN+lock, the
// pass and COMMIT.
import pg from "pg";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { DRY_ORDINARY_EVERY } from "../../src/backends/postgres/job-store.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
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

  it("20 full claims of keyed jobs › one statement each, one probe and at most 5 ordinary claim statements; a job without a key queued meanwhile is claimed within 4 claims", async () => {
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
    expect(sent.ordinary).toBeLessThanOrEqual(Math.ceil(20 / DRY_ORDINARY_EVERY));
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
});
