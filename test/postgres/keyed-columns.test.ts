// A keyed job's key and limits in generated columns (PostgreSQL migration 034): every writer —
// the library's enqueue and enqueueMany, soniq_enqueue from SQL, a run-now of a finished keyed
// job — gets `concurrency_key`, `concurrency_limit` and `rate_limit` from the `meta` it writes; a
// job without a key has NULL in all three; the keyed claim, which reads the columns only, keeps
// each key's limit; a job read "live, else finished" (the union of both tables' `SELECT *`) is
// still found. The upgrade from migration 033 fills the columns of the keyed jobs already queued
// and running, so the limit holds across it; the previous version's own statements (its union of
// both tables' `SELECT *`, its keyed claim, its keyed reads on `meta`) still run during a rolling
// deploy.
import pg from "pg";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { Soniq } from "../../src/index.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { postgresSchemaBefore } from "../helpers/postgres-schema-before.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

interface KeyColumns {
  concurrency_key: string | null;
  concurrency_limit: number | null;
  rate_limit: number | null;
}

describePostgres("postgres: a keyed job's key and limits in columns", () => {
  const schemas = usePostgresSchemas();
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  });
  afterAll(() => pool.end());

  /** A fresh schema set up by this version, its backend and a Soniq on it. */
  const open = async () => {
    const schema = schemas.next();
    const backend = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema,
      poolSize: 2,
    });
    await backend.setup();
    return {
      schema,
      backend,
      soniq: new Soniq({ backend, logger: pino({ level: "silent" }), env: {} }),
    };
  };

  const columnsOf = async (schema: string, id: string): Promise<KeyColumns | undefined> =>
    (
      await pool.query<KeyColumns>(
        `SELECT concurrency_key, concurrency_limit, rate_limit FROM "${schema}".soniq_jobs
         WHERE id = $1::uuid`,
        [id],
      )
    ).rows[0];

  it("enqueue, enqueueMany, soniq_enqueue, a plain job, run-now of a finished keyed job › each job's key and limits (NULL without a key); the claim keeps the limit", async () => {
    const { schema, backend, soniq } = await open();
    try {
      const keyed = soniq.job({
        name: "kcol.keyed",
        concurrency: { key: (args: { t: string }) => args.t, limit: 1 },
        handler: async () => undefined,
      });
      const rated = soniq.job({
        name: "kcol.rated",
        rateLimit: { limit: 3, per: 60, key: (args: { t: string }) => args.t },
        handler: async () => undefined,
      });
      const plain = soniq.job({ name: "kcol.plain", handler: async () => undefined });
      const one = await keyed.enqueue({ t: "acme" });
      const many = await keyed.enqueueMany([{ args: { t: "beta" } }, { args: { t: "gamma" } }]);
      const limitedByRate = await rated.enqueue({ t: "delta" });
      const none = await plain.enqueue({});
      const fromSql = (
        await pool.query<{ id: string }>(
          `SELECT "${schema}".soniq_enqueue('kcol.keyed', '{"t":"epsilon"}',
             '{"concurrency":{"key":"epsilon","limit":2}}') AS id`,
        )
      ).rows[0]?.id;
      if (fromSql === undefined) throw new Error("soniq_enqueue returned no id");

      expect(await columnsOf(schema, one)).toEqual({
        concurrency_key: "acme",
        concurrency_limit: 1,
        rate_limit: null,
      });
      expect(
        (await Promise.all(many.map((id) => columnsOf(schema, id)))).map((c) => c?.concurrency_key),
      ).toEqual(["beta", "gamma"]);
      expect(await columnsOf(schema, limitedByRate)).toEqual({
        concurrency_key: "delta",
        concurrency_limit: null,
        rate_limit: 3,
      });
      expect(await columnsOf(schema, fromSql)).toEqual({
        concurrency_key: "epsilon",
        concurrency_limit: 2,
        rate_limit: null,
      });
      expect(await columnsOf(schema, none)).toEqual({
        concurrency_key: null,
        concurrency_limit: null,
        rate_limit: null,
      });

      // A keyed job of `acme` finished (claimed, then completed with its result kept), then run
      // again now: back in the live table with its key, so it and acme's queued job share the
      // limit of 1. Read while finished, it is found through the live-else-finished union.
      const second = await keyed.enqueue({ t: "acme" });
      const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: 10 });
      const acmeClaimed = claimed.filter((job) => job.id === one || job.id === second);
      expect(acmeClaimed).toHaveLength(1);
      const first = acmeClaimed[0];
      if (first === undefined) throw new Error("acme not claimed");
      for (const job of claimed) {
        expect(
          await backend.jobComplete({
            id: job.id,
            owner: { workerId: job.workerId, claimToken: job.claimToken },
            result: null,
            resultRetentionSeconds: 3600,
          }),
        ).toBe(true);
      }
      expect(await columnsOf(schema, first.id)).toBeUndefined();
      expect((await soniq.jobs.get(first.id))?.status).toBe("done");
      expect(await backend.admin.jobRetryNow({ id: first.id })).toBe("done");
      expect(await columnsOf(schema, first.id)).toEqual({
        concurrency_key: "acme",
        concurrency_limit: 1,
        rate_limit: null,
      });
      const next = await backend.jobClaim({ workerId: "w", queues: null, limit: 10 });
      expect(
        next.filter((job) => job.id === one || job.id === second || job.id === first.id),
      ).toHaveLength(1);
    } finally {
      await soniq.close();
    }
  });

  it("the previous version's statements against migration 034 › its live-else-finished union of SELECT * and its keyed claim (020's signature) still run", async () => {
    const { schema, soniq } = await open();
    try {
      const keyed = soniq.job({
        name: "kcol.prev",
        concurrency: { key: (args: { t: string }) => args.t, limit: 1 },
        handler: async () => undefined,
      });
      const a = await keyed.enqueue({ t: "acme" });
      await keyed.enqueue({ t: "acme" });
      const t = (name: string) => `"${schema}".${name}`;
      // b02e272's jobGet: both tables' rows as they are, unioned by position.
      const union = await pool.query<{ id: string }>(
        `SELECT id::text FROM (SELECT * FROM ${t("soniq_jobs")} WHERE id = $1::uuid
           UNION ALL (SELECT * FROM ${t("soniq_finished_jobs")} WHERE id = $1::uuid) LIMIT 1) AS j`,
        [a],
      );
      expect(union.rows.map((r) => r.id)).toEqual([a]);
      // Migration 020's eight-argument claim, as that version calls it: one job of the key.
      const claimed = await pool.query<{ id: string }>(
        `SELECT id::text FROM ${t("soniq_keyed_claim")}('old', 10, NULL, true, NULL, NULL, NULL, 'l')`,
      );
      expect(claimed.rows).toHaveLength(1);
      // Its keyed reads on `meta` still find the rows (without the index, on a table of live jobs).
      const running = await pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${t("soniq_jobs")} AS r WHERE r.status = 'processing'
           AND (r.meta -> 'concurrency') IS NOT NULL AND (r.meta -> 'concurrency' ->> 'key') = 'acme'`,
      );
      expect(Number(running.rows[0]?.n)).toBe(1);
    } finally {
      await soniq.close();
    }
  });

  it("upgrade from migration 033 › keyed jobs queued and running before it get their columns; a key at its limit stays held", async () => {
    const schema = schemas.next();
    await postgresSchemaBefore(pool, schema, 34);
    // As migration 033's version wrote them: two jobs of key `acme` (limit 1), one already
    // running; one of `beta` with a rate limit only.
    const enqueue = async (key: string, meta: string): Promise<string> =>
      (
        await pool.query<{ id: string }>(
          `INSERT INTO "${schema}".soniq_jobs (id, name, queue, args, priority, max_attempts, meta)
           VALUES (gen_random_uuid(), 'kcol.old', 'default', $1::json, 0, 5, $2::json)
           RETURNING id`,
          [JSON.stringify({ t: key }), meta],
        )
      ).rows[0]?.id ?? "";
    const running = await enqueue("acme", '{"concurrency":{"key":"acme","limit":1}}');
    const waiting = await enqueue("acme", '{"concurrency":{"key":"acme","limit":1}}');
    const rate = await enqueue(
      "beta",
      '{"concurrency":{"key":"beta"},"rate":{"limit":5,"per":60000}}',
    );
    await pool.query(
      `UPDATE "${schema}".soniq_jobs SET status = 'processing', worker_id = 'old',
         claim_token = gen_random_uuid(), started_at = now() WHERE id = $1::uuid`,
      [running],
    );
    const backend = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema,
      poolSize: 2,
    });
    try {
      await backend.setup();
      expect(await columnsOf(schema, running)).toEqual({
        concurrency_key: "acme",
        concurrency_limit: 1,
        rate_limit: null,
      });
      expect(await columnsOf(schema, waiting)).toEqual({
        concurrency_key: "acme",
        concurrency_limit: 1,
        rate_limit: null,
      });
      expect(await columnsOf(schema, rate)).toEqual({
        concurrency_key: "beta",
        concurrency_limit: null,
        rate_limit: 5,
      });
      const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: 10 });
      expect(claimed.map((job) => job.id)).toEqual([rate]);
    } finally {
      await backend.close();
    }
  });
});
