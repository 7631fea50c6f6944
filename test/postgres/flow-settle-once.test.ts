// Workflows on PostgreSQL, the fan-in's count-down (migration 024; docs/performance.md, "The
// `fanin` workload"): a batched completion of ten members of a batch with an onComplete callback
// counts the callback's node down once (by ten), not once per member; the batch's own row once
// too. A row trigger the test adds on soniq_flow_nodes counts the updates of each node row. The
// callback is released exactly when the last member ends, and runs once.
import pg from "pg";
import { pino } from "pino";
import { afterEach, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { Soniq } from "../../src/index.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: fan-in count-down", () => {
  const schemas = usePostgresSchemas();
  const closers: Array<() => Promise<void>> = [];

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  it("batch › ten members completed in one statement › the callback's node is updated once, released after the last", async () => {
    const schema = schemas.next();
    const backend = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema,
      poolSize: 2,
    });
    await backend.setup();
    const soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
    closers.push(() => soniq.close());
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    closers.push(() => client.end());
    await client.query(`
      CREATE TABLE "${schema}".node_updates (job_id uuid NOT NULL, role text NOT NULL);
      CREATE FUNCTION "${schema}".count_node_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO "${schema}".node_updates VALUES (NEW.job_id, NEW.role);
        RETURN NULL;
      END $$;
      CREATE TRIGGER count_node_update AFTER UPDATE ON "${schema}".soniq_flow_nodes
        FOR EACH ROW EXECUTE FUNCTION "${schema}".count_node_update();`);

    const child = soniq.job<{ i: number }, void>({ name: "once.child", handler: () => {} });
    const root = soniq.job<object, void>({ name: "once.root", handler: () => {} });
    const batch = await soniq.batch({
      jobs: Array.from({ length: 20 }, (_, i) => ({ job: child, args: { i } })),
      onComplete: { job: root, args: {} },
    });
    await client.query(`TRUNCATE "${schema}".node_updates`);
    const updates = async () => {
      const { rows } = await client.query(
        `SELECT role, count(*)::int AS n FROM "${schema}".node_updates GROUP BY role ORDER BY role`,
      );
      return Object.fromEntries(rows.map((r: { role: string; n: number }) => [r.role, r.n]));
    };
    const completeTen = async () => {
      const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: 10 });
      expect(claimed.map((j) => j.name)).toEqual(Array(10).fill("once.child"));
      const changed = await backend.jobCompleteMany({
        items: claimed.map((j) => ({
          id: j.id,
          owner: { workerId: "w", claimToken: j.claimToken },
          result: null,
        })),
        resultRetentionSeconds: 3600,
      });
      expect(changed).toEqual(Array(10).fill(true));
    };
    const callbackState = async () => {
      const { rows } = await client.query(
        `SELECT j.scheduled_at > now() + interval '1000 years' AS waiting, n.pending
         FROM "${schema}".soniq_flow_nodes AS n JOIN "${schema}".soniq_jobs AS j ON j.id = n.job_id
         WHERE n.role = 'on_complete'`,
      );
      return rows[0] as { waiting: boolean; pending: number };
    };

    await completeTen();
    // Before migration 024: { batch: 1, on_complete: 10 } (one count-down per member).
    expect(await updates()).toEqual({ batch: 1, on_complete: 1 });
    expect(await callbackState()).toEqual({ waiting: true, pending: 10 });

    await completeTen();
    expect(await updates()).toEqual({ batch: 2, on_complete: 2 });
    expect(await callbackState()).toEqual({ waiting: false, pending: 0 });
    const [released] = await backend.jobClaim({ workerId: "w", queues: null, limit: 10 });
    expect(released?.name).toBe("once.root");
    const { rows } = await client.query(
      `SELECT members_left, members_failed FROM "${schema}".soniq_flow_nodes WHERE job_id = $1`,
      [batch.id],
    );
    expect(rows).toEqual([{ members_left: 0, members_failed: 0 }]);
  });
});
