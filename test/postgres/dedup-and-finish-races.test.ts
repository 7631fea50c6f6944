// Races around the move of finished jobs and their dedup keys on PostgreSQL (found by an
// adversarial review of the two-table storage): each was a defect before its fix.
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import type { NewJob } from "../../src/backends/contract/index.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { buildStatements } from "../../src/backends/postgres/sql.js";
import { isSoniqError } from "../../src/errors.js";
import { newJobId } from "../../src/jobs/job-id.js";
import { newJob } from "../contract/helpers.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

const clients: pg.Client[] = [];
afterAll(async () => {
  for (const c of clients) await c.end().catch(() => undefined);
});

async function client(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await c.connect();
  clients.push(c);
  return c;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A due job of queue `q` with a time-ordered id (the contract's builder). */
const job = (overrides: Partial<NewJob> = {}): NewJob =>
  newJob({ id: newJobId(), name: "race.job", queue: "q", ...overrides });

describePostgres("postgres: dedup keys and the finished-jobs move under races", () => {
  const schemas = usePostgresSchemas();
  const open = async () => {
    const b = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema: schemas.next(),
      poolSize: 6,
    });
    await b.setup();
    return b;
  };

  it("dedup › a refused duplicate in an open transaction locks nothing: the holder completes at once", async () => {
    const b = await open();
    const a = await client();
    try {
      await b.jobEnqueue({ jobs: [job({ dedupKey: "K" })] });
      const [c] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
      if (!c) throw new Error("nothing claimed");
      await a.query("BEGIN");
      const [refused] = await b.jobEnqueue({ jobs: [job({ dedupKey: "K" })], connection: a });
      expect(refused).toEqual({ id: c.id, inserted: false });
      const started = performance.now();
      expect(
        await b.jobComplete({
          id: c.id,
          owner: { workerId: c.workerId, claimToken: c.claimToken },
          result: null,
          resultRetentionSeconds: 60,
        }),
      ).toBe(true);
      // Generous bound: before the fix it waited for the caller's COMMIT (2 s below).
      expect(performance.now() - started).toBeLessThan(1500);
      await sleep(2000);
      await a.query("COMMIT");
    } finally {
      await b.close();
    }
  });

  it("dedup › two transactions refused on held keys in opposite orders both finish (no deadlock)", async () => {
    const b = await open();
    const [a1, a2] = [await client(), await client()];
    try {
      await b.jobEnqueue({ jobs: [job({ dedupKey: "K0" }), job({ dedupKey: "K1" })] });
      await a1.query("BEGIN");
      await a2.query("BEGIN");
      await b.jobEnqueue({ jobs: [job({ dedupKey: "K0" })], connection: a1 });
      await b.jobEnqueue({ jobs: [job({ dedupKey: "K1" })], connection: a2 });
      const p1 = b.jobEnqueue({ jobs: [job({ dedupKey: "K1" })], connection: a1 });
      await sleep(200);
      const p2 = b.jobEnqueue({ jobs: [job({ dedupKey: "K0" })], connection: a2 });
      const [r1, r2] = await Promise.all([p1, p2]);
      expect(r1?.[0]?.inserted).toBe(false);
      expect(r2?.[0]?.inserted).toBe(false);
      await a1.query("ROLLBACK");
      await a2.query("ROLLBACK");
    } finally {
      await b.close();
    }
  });

  it("dedup › losing a race for a key whose hold passed answers the job that took it, not the old holder", async () => {
    const b = await open();
    const a = await client();
    try {
      const first = job({ dedupKey: "K" });
      await b.jobEnqueue({ jobs: [first] });
      const [c] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
      if (!c) throw new Error("nothing claimed");
      await b.jobComplete({
        id: c.id,
        owner: { workerId: c.workerId, claimToken: c.claimToken },
        result: null,
        resultRetentionSeconds: 0.2,
      });
      await sleep(400);
      const taker = job({ dedupKey: "K" });
      await a.query("BEGIN");
      expect((await b.jobEnqueue({ jobs: [taker], connection: a }))[0]?.inserted).toBe(true);
      const single = b.jobEnqueue({ jobs: [job({ dedupKey: "K" })] });
      const batch = b.jobEnqueue({ jobs: [job({ dedupKey: "K" }), job({ dedupKey: "other" })] });
      await sleep(300);
      await a.query("COMMIT");
      expect((await single)[0]).toEqual({ id: taker.id, inserted: false });
      expect((await batch)[0]).toEqual({ id: taker.id, inserted: false });
    } finally {
      await b.close();
    }
  });

  for (const action of ["jobDelete", "jobRetryNow", "jobCancelRequest"] as const) {
    it(`operations › ${action} racing the job's completion › acts on the finished job, never "not_found"`, async () => {
      const b = await open();
      const a = await client();
      try {
        const j = job();
        await b.jobEnqueue({ jobs: [j] });
        const [c] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
        if (!c) throw new Error("nothing claimed");
        await a.query("BEGIN");
        const completed = await a.query(buildStatements(b.schema).complete, [
          c.id,
          c.workerId,
          c.claimToken,
          "1",
          60,
        ]);
        expect(completed.rowCount).toBe(1);
        const answer =
          action === "jobCancelRequest"
            ? b.admin.jobCancelRequest({ id: j.id, retentionSeconds: 60 })
            : b.admin[action]({ id: j.id });
        await sleep(300);
        await a.query("COMMIT");
        expect(await answer).toBe(action === "jobCancelRequest" ? "finished" : "done");
      } finally {
        await b.close();
      }
    });
  }

  it("operations › retry-now of a finished job whose key another job took › DEDUP_CONFLICT, nothing changes", async () => {
    const b = await open();
    try {
      const first = job({ dedupKey: "K" });
      await b.jobEnqueue({ jobs: [first] });
      const [c] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
      if (!c) throw new Error("nothing claimed");
      await b.jobComplete({
        id: c.id,
        owner: { workerId: c.workerId, claimToken: c.claimToken },
        result: null,
        resultRetentionSeconds: 0.2,
      });
      await sleep(400);
      const taker = job({ dedupKey: "K", delaySeconds: 3600 });
      expect((await b.jobEnqueue({ jobs: [taker] }))[0]?.inserted).toBe(true);
      const err = await b.admin.jobRetryNow({ id: first.id }).catch((e: unknown) => e);
      expect(isSoniqError(err, "DEDUP_CONFLICT")).toBe(true);
      expect((await b.jobGet({ id: first.id }))?.status).toBe("done");
      expect((await b.jobStats()).queued).toBe(1);
    } finally {
      await b.close();
    }
  });
});
