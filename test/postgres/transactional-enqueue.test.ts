// Transactional enqueue: `enqueue(jobs, { connection })` runs on the caller's client, inside the
// caller's transaction — the job exists iff the caller commits, and wakes workers at commit.
import pg from "pg";
import { afterEach, expect, it, vi } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { newJob } from "../contract/helpers.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: transactional enqueue", () => {
  const schemas = usePostgresSchemas();
  const closers: Array<() => Promise<void>> = [];

  afterEach(async () => {
    for (const close of closers.splice(0)) await close().catch(() => undefined);
  });

  async function open(): Promise<{ backend: PostgresBackend; client: pg.Client }> {
    const schema = schemas.next();
    const backend = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema,
      poolSize: 2,
    });
    closers.push(() => backend.close());
    await backend.setup();
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    closers.push(() => client.end());
    // The caller's search_path does not reach Soniq's schema: runtime SQL is schema-qualified.
    await client.query("SET search_path TO public");
    return { backend, client };
  }

  it("rolls back with the caller's transaction", async () => {
    const { backend, client } = await open();
    const job = newJob();
    await client.query("BEGIN");
    expect(await backend.jobEnqueue({ jobs: [job], connection: client })).toEqual([
      { id: job.id, inserted: true },
    ]);
    expect(await backend.jobGet({ id: job.id })).toBeNull();
    await client.query("ROLLBACK");
    expect(await backend.jobGet({ id: job.id })).toBeNull();
    expect((await backend.jobStats()).total).toBe(0);
  });

  it("commits with the caller's transaction, invisible until then", async () => {
    const { backend, client } = await open();
    const job = newJob({ queue: "tx" });
    await client.query("BEGIN");
    await backend.jobEnqueue({ jobs: [job], connection: client });
    expect(await backend.jobGet({ id: job.id })).toBeNull();
    expect(await backend.jobClaim({ workerId: "w", queues: null, limit: 10 })).toHaveLength(0);
    await client.query("COMMIT");
    expect(await backend.jobGet({ id: job.id })).toMatchObject({
      id: job.id,
      status: "queued",
      queue: "tx",
    });
  });

  it("wakes subscribers at commit, not before", async () => {
    const { backend, client } = await open();
    const woke: string[] = [];
    backend.notifier.subscribe((queue) => woke.push(queue));
    // Wait until the LISTEN is in place: a plain enqueue then wakes us.
    const deadline = Date.now() + 10_000;
    while (!woke.includes("probe")) {
      if (Date.now() > deadline) throw new Error("LISTEN never came up");
      await backend.jobEnqueue({ jobs: [newJob({ queue: "probe" })] });
      await new Promise((r) => setTimeout(r, 100));
    }
    await client.query("BEGIN");
    await backend.jobEnqueue({ jobs: [newJob({ queue: "tx" })], connection: client });
    await new Promise((r) => setTimeout(r, 300));
    expect(woke).not.toContain("tx");
    await client.query("COMMIT");
    await expect.poll(() => woke.includes("tx"), { timeout: 5000 }).toBe(true);
  });

  it("a concurrent holder of the dedup key that commits mid-insert is returned", async () => {
    const { backend, client } = await open();
    const holder = newJob({ dedupKey: "race" });
    await client.query("BEGIN");
    await backend.jobEnqueue({ jobs: [holder], connection: client });
    // This insert waits on the uncommitted holder; after its commit the holder is not in the
    // waiting statement's snapshot, so the backend must look it up again.
    const late = newJob({ dedupKey: "race" });
    const spy = vi.spyOn(pg.Pool.prototype, "query");
    const pending = backend.jobEnqueue({ jobs: [late, newJob()] });
    await new Promise((r) => setTimeout(r, 300));
    await client.query("COMMIT");
    const [first, second] = await pending;
    expect(spy).toHaveBeenCalledTimes(2); // the insert, then the holder look-up
    spy.mockRestore();
    expect(first).toEqual({ id: holder.id, inserted: false });
    expect(second?.inserted).toBe(true);
  });

  it("a concurrent holder that rolls back leaves the key to the waiting insert", async () => {
    const { backend, client } = await open();
    await client.query("BEGIN");
    await backend.jobEnqueue({ jobs: [newJob({ dedupKey: "race" })], connection: client });
    const late = newJob({ dedupKey: "race" });
    const pending = backend.jobEnqueue({ jobs: [late] });
    await new Promise((r) => setTimeout(r, 300));
    await client.query("ROLLBACK");
    expect(await pending).toEqual([{ id: late.id, inserted: true }]);
  });

  it("dedup inside the caller's transaction sees its own earlier insert", async () => {
    const { backend, client } = await open();
    const first = newJob({ dedupKey: "k" });
    const second = newJob({ dedupKey: "k" });
    await client.query("BEGIN");
    await backend.jobEnqueue({ jobs: [first], connection: client });
    expect(await backend.jobEnqueue({ jobs: [second], connection: client })).toEqual([
      { id: first.id, inserted: false },
    ]);
    await client.query("COMMIT");
    expect((await backend.jobStats()).total).toBe(1);
  });
});
