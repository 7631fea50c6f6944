// The PostgreSQL keyed claim's rotating pass (docs/flow-control.md, "Fairness: the rule and its
// bound"): each claim takes keys' heads in key order from just after the key where the process's
// previous keyed claim stopped, wrapping round; only a claim that passed every key takes second
// jobs of keys with room (the full pass).
import pg from "pg";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { Soniq } from "../../src/index.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: the keyed claim's rotating pass", () => {
  const schemas = usePostgresSchemas();
  let backend: PostgresBackend;
  let soniq: Soniq;
  let schema: string;
  let pool: pg.Pool;

  beforeAll(async () => {
    schema = schemas.next();
    backend = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });
    pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
    await backend.setup();
    soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
  });
  afterAll(async () => {
    await pool.end();
    await soniq.close();
  });

  /** `<key><n>` of each claimed job, sorted (claimed arguments are JSON text). */
  const keysOf = (jobs: { args: unknown }[]) =>
    jobs
      .map((j) => {
        const args = (typeof j.args === "string" ? JSON.parse(j.args) : j.args) as {
          k: string;
          n: number;
        };
        return `${args.k}${args.n}`;
      })
      .sort();

  it("claims of 2 over 5 keys › take heads k0 k1, then k2 k3, then k4 and wrap to k0's second; a claim of 10 takes the 4 left", async () => {
    const job = soniq.job({
      name: "rotation.job",
      concurrency: { key: (args: { k: string; n: number }) => args.k, limit: 5 },
      handler: async () => undefined,
    });
    for (let n = 0; n < 2; n++) {
      // Enqueued k4 first: the walk goes by key, not by age (a ranking of every key's heads by
      // claim order would take k4 and k3 first).
      for (let k = 4; k >= 0; k--) await job.enqueue({ k: `k${k}`, n });
    }
    const claim = (limit: number) => backend.jobClaim({ workerId: "w1", queues: null, limit });
    expect(keysOf(await claim(2))).toEqual(["k00", "k10"]);
    expect(keysOf(await claim(2))).toEqual(["k20", "k30"]);
    expect(keysOf(await claim(2))).toEqual(["k01", "k40"]);
    expect(keysOf(await claim(10))).toEqual(["k11", "k21", "k31", "k41"]);
    expect(await claim(10)).toEqual([]);
  });

  it("one key with 300 queued, another with 1 › a claim of 1 after the big key's head takes the small key's job (one rotation)", async () => {
    const job = soniq.job({
      name: "rotation.tenants",
      concurrency: { key: (args: { k: string; n: number }) => args.k, limit: 300 },
      handler: async () => undefined,
    });
    await job.enqueueMany(Array.from({ length: 300 }, (_, n) => ({ args: { k: "big", n } })));
    await job.enqueue({ k: "small", n: 0 });
    const claim = (limit: number) => backend.jobClaim({ workerId: "w2", queues: null, limit });
    // Whatever the previous claim's key, the small key's job is taken within two claims of 1.
    const first = keysOf(await claim(1));
    const second = keysOf(await claim(1));
    expect([...first, ...second]).toContain("small0");
    // A claim larger than the keys: the full pass fills it from the big key.
    expect((await claim(50)).length).toBe(50);
  });

  it("a key whose first row in claim order is not due, or of a name the claimer does not run › its head is the first row that is", async () => {
    // The walk reads each key's first queued row in claim order and takes it as the head when it
    // qualifies; else a probe of the key finds the head (migration 028).
    const mixed = soniq.job({
      name: "rotation.mixed",
      concurrency: { key: (args: { k: string; n: number }) => args.k, limit: 5 },
      handler: async () => undefined,
    });
    const other = soniq.job({
      name: "rotation.other",
      concurrency: { key: (args: { k: string; n: number }) => args.k, limit: 5 },
      handler: async () => undefined,
    });
    await mixed.enqueue({ k: "ma", n: 0 }, { priority: -1, delay: 3600 });
    await mixed.enqueue({ k: "ma", n: 1 });
    await other.enqueue({ k: "mb", n: 0 }, { priority: -1 });
    await mixed.enqueue({ k: "mb", n: 1 });
    const claim = (limit: number) =>
      backend.jobClaim({ workerId: "w4", queues: null, limit, names: ["rotation.mixed"] });
    expect(keysOf(await claim(1))).toEqual(["ma1"]);
    expect(keysOf(await claim(5))).toEqual(["mb1"]);
    expect(await claim(5)).toEqual([]);
  });

  it("migration 020's signature (a process of the previous version during an upgrade) › claims through 028's function: heads first, then the full pass", async () => {
    const job = soniq.job({
      name: "rotation.previous",
      concurrency: { key: (args: { k: string; n: number }) => args.k, limit: 2 },
      handler: async () => undefined,
    });
    for (let n = 0; n < 3; n++) for (const k of ["p0", "p1"]) await job.enqueue({ k, n });
    const { rows } = await pool.query<{ args: string; last_key: string }>(
      `SELECT args::text AS args, current_setting('soniq.keyed_cursor', true) AS last_key
       FROM ${schema}.soniq_keyed_claim('w3', 10, NULL, true, '{rotation.previous}', NULL, NULL,
                                       'rotation-test')`,
    );
    // Limit 2 per key: each key's first two jobs, whatever the previous version asked for.
    expect(keysOf(rows)).toEqual(["p00", "p01", "p10", "p11"]);
    expect(rows[0]?.last_key).toBe("p1");
  });
});
