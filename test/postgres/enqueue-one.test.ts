// A single enqueue is one plain `INSERT … VALUES` (the `enqueueOne` statement, prepared on the
// pool's connections) with the batch statement's semantics: dedup against the table, due-ness by
// the database clock, delays in seconds, runAt absolute, meta and trace context kept, the
// caller's transaction honoured, the NOTIFY of a due job.
import pg from "pg";
import { afterEach, expect, it, vi } from "vitest";
import type { PgQueryable } from "../../src/backends/contract/index.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { buildStatements } from "../../src/backends/postgres/sql.js";
import { newJobId } from "../../src/jobs/job-id.js";
import { newJob } from "../contract/helpers.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: single enqueue", () => {
  const schemas = usePostgresSchemas();
  const backends: PostgresBackend[] = [];
  const clients: pg.Client[] = [];

  afterEach(async () => {
    vi.restoreAllMocks();
    for (const c of clients.splice(0)) await c.end().catch(() => undefined);
    for (const b of backends.splice(0)) await b.close().catch(() => undefined);
  });

  async function open(): Promise<{ b: PostgresBackend; schema: string }> {
    const schema = schemas.next();
    const b = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 1 });
    backends.push(b);
    await b.setup();
    return { b, schema };
  }

  async function client(): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await c.connect();
    clients.push(c);
    return c;
  }

  it("is one named statement, the single-row INSERT, not the unnest of arrays", async () => {
    const { b, schema } = await open();
    const sql = buildStatements(schema);
    const spy = vi.spyOn(pg.Pool.prototype, "query");
    const job = newJob({ id: newJobId() });
    expect(await b.jobEnqueue({ jobs: [job] })).toEqual([{ id: job.id, inserted: true }]);
    expect(spy).toHaveBeenCalledTimes(1);
    const call = spy.mock.calls[0]?.[0] as { name?: string; text?: string };
    expect(call.text).toBe(sql.enqueueOne);
    expect(call.name).toMatch(/.+/); // prepared once per connection
    expect(await b.jobGet({ id: job.id })).toMatchObject({ status: "queued", attempts: 0 });
  });

  it("returns the holder of a dedup key and inserts nothing", async () => {
    const { b } = await open();
    const held = newJob({ dedupKey: "k" });
    await b.jobEnqueue({ jobs: [held] });
    const again = newJob({ dedupKey: "k" });
    expect(await b.jobEnqueue({ jobs: [again] })).toEqual([{ id: held.id, inserted: false }]);
    expect(await b.jobGet({ id: again.id })).toBeNull();
    expect((await b.jobStats()).total).toBe(1);
  });

  it("schedules by the database clock and keeps meta and the trace context", async () => {
    const { b } = await open();
    const now = await b.now();
    const runAt = new Date(now.getTime() + 120_000);
    const delayed = newJob({ delaySeconds: 90, meta: '{"x":1}', traceContext: "00-abc-def-01" });
    const absolute = newJob({ runAt });
    await b.jobEnqueue({ jobs: [delayed] });
    await b.jobEnqueue({ jobs: [absolute] });
    const d = await b.jobGet({ id: delayed.id });
    const offset = (d?.scheduledAt.getTime() ?? 0) - (d?.createdAt.getTime() ?? 0);
    expect(offset).toBeGreaterThanOrEqual(89_999);
    expect(offset).toBeLessThanOrEqual(90_001);
    expect(d).toMatchObject({ meta: '{"x":1}', traceContext: "00-abc-def-01" });
    expect((await b.jobGet({ id: absolute.id }))?.scheduledAt.getTime()).toBe(runAt.getTime());
  });

  it("NOTIFYs a due job's queue, and not a delayed one's", async () => {
    const { b, schema } = await open();
    const listener = await client();
    const heard: string[] = [];
    listener.on("notification", (n) => heard.push(n.payload ?? ""));
    await listener.query(`LISTEN soniq_${schema}`);
    await b.jobEnqueue({ jobs: [newJob({ queue: "later", delaySeconds: 60 })] });
    await b.jobEnqueue({ jobs: [newJob({ queue: "now" })] });
    await listener.query("SELECT 1"); // notifications sent before this answer have arrived
    expect(heard).toEqual(["now"]);
  });

  it("in the caller's transaction: one statement, and the job exists iff the caller commits", async () => {
    const { b } = await open();
    const c = await client();
    const seen: string[] = [];
    const counting: PgQueryable = {
      query: (text, values) => {
        seen.push(text);
        return c.query(text, values);
      },
    };
    const rolledBack = newJob();
    await c.query("BEGIN");
    await b.jobEnqueue({ jobs: [rolledBack], connection: counting });
    await c.query("ROLLBACK");
    const committed = newJob({ dedupKey: "t" });
    await c.query("BEGIN");
    expect(await b.jobEnqueue({ jobs: [committed], connection: counting })).toEqual([
      { id: committed.id, inserted: true },
    ]);
    await c.query("COMMIT");
    expect(seen).toHaveLength(2);
    expect(await b.jobGet({ id: rolledBack.id })).toBeNull();
    expect(await b.jobGet({ id: committed.id })).toMatchObject({ status: "queued" });
  });

  it("reports an id that already exists as an error", async () => {
    const { b } = await open();
    const job = newJob();
    await b.jobEnqueue({ jobs: [job] });
    await expect(b.jobEnqueue({ jobs: [{ ...newJob(), id: job.id }] })).rejects.toThrow();
  });
});
