// A connection the server ends while Soniq holds it checked out (pg_terminate_backend, a restart
// between two statements of a transaction) must fail that call, not crash the process: pg-pool
// drops its own `error` listener during a checkout, and an `error` event nobody hears is an
// uncaught exception (exit 4 for a worker; found by chaos:short). Vitest fails a file on one.
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { checkOut } from "../../src/backends/postgres/checkout.js";
import { PgConnection } from "../../src/backends/postgres/connection.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres } from "../helpers/postgres-suite.js";
import { waitFor } from "../helpers/wait.js";

describePostgres("postgres: a checked-out connection the server terminates", () => {
  const admin = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
  afterAll(() => admin.end());

  /** Terminates `pid` and waits until the server no longer lists it. */
  async function terminate(pid: number): Promise<void> {
    await admin.query("SELECT pg_terminate_backend($1)", [pid]);
    await waitFor(
      async () =>
        (await admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])).rowCount === 0,
      10_000,
      `backend ${pid} gone`,
    );
    // Let the driver read the server's goodbye (the `error` event) before the next step.
    await new Promise((r) => setTimeout(r, 100));
  }

  it("checkOut › terminated between statements › no uncaught error; the connection is discarded", async () => {
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
    try {
      const held = await checkOut(pool);
      const { rows } = await held.client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await terminate(rows[0]?.pid as number);
      held.release();
      expect(pool.totalCount).toBe(0);
      const after = await pool.query<{ one: number }>("SELECT 1 AS one");
      expect(after.rows[0]?.one).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it("PgConnection.transaction › terminated while the caller's code runs › the call rejects, the pool still serves", async () => {
    const conn = new PgConnection({
      connectionString: TEST_DATABASE_URL,
      schema: "public",
      poolSize: 2,
      onPoolError: () => undefined,
    });
    try {
      const failed = await conn
        .transaction(async (client) => {
          const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
          await terminate(rows[0]?.pid as number);
          await client.query("SELECT 1");
        })
        .then(
          () => null,
          (err: unknown) => err,
        );
      expect(failed).toBeInstanceOf(Error);
      const after = await conn.run<{ one: number }>("SELECT 1 AS one", []);
      expect(after.rows[0]?.one).toBe(1);
    } finally {
      await conn.close(async () => undefined);
    }
  });
});
