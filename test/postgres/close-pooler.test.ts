/**
 * close() behind a transaction-mode pooler is bounded (docs/backends.md, "Behind PgBouncer in
 * transaction mode"): a statement waiting for a lock another session holds is cancelled by the
 * protocol's cancel request sent through PgBouncer (no server process ids are known there), and
 * when the pooler stops answering altogether (SIGSTOP) close() still settles, ending the sockets
 * of the calls the cancel could not reach. Before, close() waited for such a call without bound.
 */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { isSoniqError } from "../../src/errors.js";
import { newJob } from "../contract/helpers.js";
import { describePgBouncer, type PgBouncer, startPgBouncer } from "../helpers/pgbouncer.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { usePostgresSchemas } from "../helpers/postgres-suite.js";
import { waitFor } from "../helpers/wait.js";

describePgBouncer("postgres: close through pgbouncer (transaction mode)", () => {
  const schemas = usePostgresSchemas("soniq_closeb");
  let bouncer: PgBouncer;
  beforeAll(async () => {
    bouncer = await startPgBouncer();
  });
  afterAll(async () => {
    await bouncer?.stop();
  });

  /**
   * A pooled backend on a fresh schema with an enqueue blocked behind `LOCK TABLE soniq_jobs`
   * held by a direct session; `holder` ends that session.
   */
  async function blockedEnqueue() {
    const schema = schemas.next();
    const backend = new PostgresBackend({
      connectionString: bouncer.url,
      schema,
      poolSize: 2,
      pooler: "transaction",
    });
    await backend.setup();
    const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query(`LOCK TABLE "${schema}".soniq_jobs IN ACCESS EXCLUSIVE MODE`);
    const call = backend.jobEnqueue({ jobs: [newJob()] }).catch((e: unknown) => e);
    const release = async () => {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end().catch(() => undefined);
    };
    await waitFor(
      async () => {
        // Not on `holder`: inside its transaction pg_stat_activity is read once and kept.
        const observer = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await observer.connect();
        try {
          const { rows } = await observer.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1",
            [`%"${schema}"%`],
          );
          return (rows[0]?.n ?? 0) > 0;
        } finally {
          await observer.end();
        }
      },
      15_000,
      "the enqueue waiting for the lock",
    ).catch(async (err: unknown) => {
      await release();
      throw err;
    });
    return { backend, call, release };
  }

  it("close › a statement waits for a lock another session holds › cancelled through the pooler: close settles in seconds, the call fails CLOSED (cause: query canceled, 57014)", async () => {
    const { backend, call, release } = await blockedEnqueue();
    try {
      const started = Date.now();
      await backend.close();
      // 1 s before the cancel, then the cancel's round trip: well under the 5 s abandon bound.
      expect(Date.now() - started).toBeLessThan(5000);
      const err = await call;
      expect(isSoniqError(err, "CLOSED"), String(err)).toBe(true);
      expect(((err as Error).cause as { code?: string }).code).toBe("57014");
    } finally {
      await release();
    }
  }, 60_000);

  it("close › the pooler stops answering (SIGSTOP) while a statement runs › close still settles within its bound, the call fails CLOSED", async () => {
    const { backend, call, release } = await blockedEnqueue();
    bouncer.kill("SIGSTOP");
    try {
      const started = Date.now();
      await backend.close();
      const took = Date.now() - started;
      // 1 s + a cancel that is never answered (2 s) + 5 s, then the pool's unanswered goodbye
      // (5 s): about 13 s; bounded generously for a loaded machine.
      expect(took).toBeGreaterThanOrEqual(5000);
      expect(took).toBeLessThan(30_000);
      const err = await call;
      expect(isSoniqError(err, "CLOSED"), String(err)).toBe(true);
    } finally {
      bouncer.kill("SIGCONT");
      await release();
    }
  }, 90_000);
});
