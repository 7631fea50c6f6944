// Workflows on PostgreSQL (issue 29; docs/workflows.md): a flow enqueued inside the caller's
// transaction exists iff it commits (a rollback leaves no job, node or edge); a dependant
// enqueued while its dependency is live holds the dependency's end until the caller commits, so
// an end racing the enqueue is never missed; a dependency that finished before the dependant was
// enqueued settles it at once, retention 0 included.
import pg from "pg";
import { pino } from "pino";
import { afterEach, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { Soniq } from "../../src/index.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";
import { waitFor } from "../helpers/wait.js";

describePostgres("postgres: workflows in transactions", () => {
  const schemas = usePostgresSchemas();
  const closers: Array<() => Promise<void>> = [];

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  async function open() {
    const schema = schemas.next();
    const backend = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema,
      poolSize: 3,
    });
    await backend.setup();
    const soniq = new Soniq({
      backend,
      logger: pino({ level: "silent" }),
      env: {},
      pollInterval: 0.05,
      heartbeatInterval: 0.1,
    });
    closers.push(() => soniq.close());
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    closers.push(() => client.end());
    const count = async (table: string) => {
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM "${schema}".${table}`);
      return rows[0].n as number;
    };
    return { backend, soniq, client, count };
  }

  it("flow › enqueued in a rolled-back transaction › leaves no job, node or edge", async () => {
    const { soniq, client, count } = await open();
    const leaf = soniq.job({ name: "tx.leaf", handler: async () => 1 });
    const top = soniq.job({ name: "tx.top", handler: async () => 2 });
    await client.query("BEGIN");
    const flow = await soniq.flow(
      {
        job: top,
        args: {},
        children: [
          { job: leaf, args: {} },
          { job: leaf, args: {} },
        ],
      },
      { connection: client },
    );
    expect(flow.ids).toHaveLength(3);
    await client.query("ROLLBACK");
    expect(await count("soniq_jobs")).toBe(0);
    expect(await count("soniq_flow_nodes")).toBe(0);
    expect(await count("soniq_job_deps")).toBe(0);
    expect(await soniq.flows.get(flow.id)).toBeNull();
  });

  it("flow › committed in the caller's transaction › runs to the end after the commit", async () => {
    const { soniq, client } = await open();
    const leaf = soniq.job({ name: "tx.leaf", handler: async () => 1 });
    const top = soniq.job({
      name: "tx.top",
      handler: async (_a: object, ctx) => (await ctx.dependencies()).length,
    });
    await client.query("BEGIN");
    const flow = await soniq.flow(
      {
        job: top,
        args: {},
        children: [
          { job: leaf, args: {} },
          { job: leaf, args: {} },
        ],
      },
      { connection: client },
    );
    expect(await soniq.getJob(flow.id)).toBeNull();
    await client.query("COMMIT");
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(async () => (await soniq.getJob(flow.id))?.status === "done", 20_000);
    await worker.stop();
    expect((await soniq.getJob(flow.id))?.result).toBe(2);
  });

  it("after › the dependency ends while the dependant's transaction is open › the end waits for the commit and releases it", async () => {
    const { soniq, client, backend } = await open();
    const step = soniq.job({ name: "tx.step", handler: async () => "x" });
    const a = await step.enqueue({});
    const [claimed] = await backend.jobClaim({ workerId: "w1", queues: null, limit: 1 });
    expect(claimed?.id).toBe(a);
    await client.query("BEGIN");
    const b = await step.enqueue({}, { after: [a], connection: client });
    // The completion blocks on the dependant's lock until the caller commits.
    let completed = false;
    const completion = backend
      .jobComplete({
        id: a,
        owner: { workerId: "w1", claimToken: claimed!.claimToken },
        result: '"x"',
        resultRetentionSeconds: 3600,
      })
      .then((ok) => {
        completed = true;
        return ok;
      });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(completed).toBe(false);
    await client.query("COMMIT");
    expect(await completion).toBe(true);
    const row = await soniq.getJob(b);
    expect(row?.status).toBe("queued");
    expect(row!.scheduledAt.getTime()).toBeLessThan(Date.now() + 60_000);
  });

  it("after › dependency done with retention 0 before the enqueue, and one awaited at retention 0 › both release the dependant", async () => {
    const { soniq } = await open();
    const quick = soniq.job({ name: "tx.quick", resultRetention: 0, handler: async () => 7 });
    const next = soniq.job({
      name: "tx.next",
      handler: async (_a: object, ctx) => (await ctx.dependencies()).map((d) => d.result),
    });
    const a = await quick.enqueue({});
    const b = await next.enqueue({}, { after: [a] });
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(async () => (await soniq.getJob(b))?.status === "done", 20_000);
    await worker.stop();
    expect((await soniq.getJob(b))?.result).toEqual([7]);
  });
});
