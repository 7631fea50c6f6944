// Batch enqueue is one statement (one round trip), dedups across the batch and against the
// table, and stores arguments byte for byte.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterEach, expect, it, vi } from "vitest";
import type { PgQueryable } from "../../src/backends/contract/index.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { newJob } from "../contract/helpers.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

function must<T>(value: T | null | undefined): T {
  if (value === null || value === undefined) throw new Error("expected a value");
  return value;
}

describePostgres("postgres: batch enqueue", () => {
  const schemas = usePostgresSchemas();
  const backends: PostgresBackend[] = [];

  afterEach(async () => {
    vi.restoreAllMocks();
    for (const b of backends.splice(0)) await b.close().catch(() => undefined);
  });

  async function open(): Promise<PostgresBackend> {
    const schema = schemas.next();
    const b = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });
    backends.push(b);
    await b.setup();
    return b;
  }

  it("inserts 1,000 jobs in one statement, with dedup across the batch and the table", async () => {
    const b = await open();
    const held = newJob({ dedupKey: "held" });
    await b.jobEnqueue({ jobs: [held] });

    // 1,000 jobs: every 10th repeats the key of the job 5 before it, job 500 repeats "held".
    const jobs = Array.from({ length: 1000 }, (_, i) =>
      newJob({ queue: `q${i % 3}`, dedupKey: `k${i}` }),
    );
    for (let i = 10; i < 1000; i += 10) jobs[i] = newJob({ dedupKey: `k${i - 5}` });
    jobs[500] = newJob({ dedupKey: "held" });

    const spy = vi.spyOn(pg.Pool.prototype, "query");
    const started = performance.now();
    const results = await b.jobEnqueue({ jobs });
    const elapsed = performance.now() - started;
    expect(spy).toHaveBeenCalledTimes(1);
    expect(elapsed).toBeLessThan(5000);

    expect(results).toHaveLength(1000);
    results.forEach((result, i) => {
      if (i === 500) expect(result).toEqual({ id: held.id, inserted: false });
      else if (i % 10 === 0 && i >= 10)
        expect(result).toEqual({ id: must(jobs[i - 5]).id, inserted: false });
      else expect(result).toEqual({ id: must(jobs[i]).id, inserted: true });
    });
    // 99 duplicates (i = 10, 20, …, 990; one of them is "held"), plus the held job itself.
    expect((await b.jobStats()).queued).toBe(1 + 1000 - 99);
  });

  it("uses the caller's connection for exactly one statement", async () => {
    const b = await open();
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const seen: string[] = [];
      const counting: PgQueryable = {
        query: (text, values) => {
          seen.push(text);
          return client.query(text, values);
        },
      };
      const jobs = Array.from({ length: 1000 }, (_, i) =>
        newJob({ dedupKey: i % 2 === 0 ? `e${i}` : null }),
      );
      const results = await b.jobEnqueue({ jobs, connection: counting });
      expect(seen).toHaveLength(1);
      expect(results.every((r) => r.inserted)).toBe(true);
      expect((await b.jobStats()).total).toBe(1000);
    } finally {
      await client.end();
    }
  });

  it("round-trips arguments and results byte for byte, \\u0000 included", async () => {
    const b = await open();
    const args = '{ "b" : 1,  "a":[1.50, 1e3], "nul":"\\u0000", "s":"é✓🎵" }';
    const job = newJob({ args });
    await b.jobEnqueue({ jobs: [job] });
    expect((await b.jobGet({ id: job.id }))?.args).toBe(args);
    const [claimed] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
    expect(claimed?.args).toBe(args);
    const result = '[ "\\u0000" , {"x":  null} ]';
    await b.jobComplete({
      id: job.id,
      owner: { workerId: "w", claimToken: must(claimed).claimToken },
      result,
      resultRetentionSeconds: 60,
    });
    expect((await b.jobGet({ id: job.id }))?.result).toBe(result);
  });

  it("schedules by the database clock: delays in seconds, runAt absolute", async () => {
    const b = await open();
    const now = await b.now();
    const runAt = new Date(now.getTime() + 120_000);
    const delayed = newJob({ delaySeconds: 90 });
    const absolute = newJob({ runAt });
    await b.jobEnqueue({ jobs: [delayed, absolute] });
    const d = must(await b.jobGet({ id: delayed.id }));
    const offset = d.scheduledAt.getTime() - d.createdAt.getTime();
    expect(offset).toBeGreaterThanOrEqual(89_999);
    expect(offset).toBeLessThanOrEqual(90_001);
    expect((await b.jobGet({ id: absolute.id }))?.scheduledAt.getTime()).toBe(runAt.getTime());
  });

  it("reports a job id that already exists as an error and inserts nothing of the batch", async () => {
    const b = await open();
    const job = newJob();
    await b.jobEnqueue({ jobs: [job] });
    const fresh = newJob({ id: randomUUID() });
    await expect(b.jobEnqueue({ jobs: [fresh, { ...newJob(), id: job.id }] })).rejects.toThrow();
    expect(await b.jobGet({ id: fresh.id })).toBeNull();
  });
});
