// How many server connections a worker opens during a drain (docs/performance.md, "Connection
// warm-up"): each new connection's first claim and completion cost the server 30–60 ms of CPU, so
// the hot path should run on the few it needs. The leader's maintenance services share one lane
// (src/lifecycle/lane.ts): before it, their first ticks sent five statements at once beside a
// claim and a completion, and a 10-slot pool grew to all ten.
import pg from "pg";
import { pino } from "pino";
import { afterEach, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });

/** `TEST_DATABASE_URL` with `application_name` set, so the server names this instance's sessions. */
function named(applicationName: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set("application_name", applicationName);
  return url.toString();
}

describePostgres("postgres: the worker's connections", () => {
  const schemas = usePostgresSchemas();
  const opened: Soniq[] = [];
  afterEach(async () => {
    for (const soniq of opened.splice(0)) await soniq.close().catch(() => undefined);
  });

  it("worker › a 3,000-job drain, 10 in flight, maintenance ticking every 100 ms › opens at most 8 server connections", async () => {
    const schema = schemas.next();
    const app = `soniq_pool_${Math.random().toString(36).slice(2, 10)}`;
    const producer = new Soniq({ databaseUrl: TEST_DATABASE_URL, schema, logger: silent, env: {} });
    opened.push(producer);
    await producer.setup();
    const fill = producer.job({ name: "noop", handler: async () => undefined });
    const jobs = 3000;
    for (let i = 0; i < jobs; i += 1000) {
      await fill.enqueueMany(Array.from({ length: 1000 }, (_, j) => ({ args: { i: i + j } })));
    }
    // The worker's instance: its pool (10 connections, the default) and its LISTEN connection.
    // Heartbeats every 100 ms: the maintenance lease is tried after 100 ms, and the leader's
    // services tick every 100 ms through the drain.
    const consumer = new Soniq({
      databaseUrl: named(app),
      schema,
      logger: silent,
      env: {},
      heartbeatInterval: 0.1,
      heartbeatTimeout: 5,
    });
    opened.push(consumer);
    let done = 0;
    consumer.job({
      name: "noop",
      handler: async () => {
        done += 1;
      },
    });
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    const seen = new Set<number>();
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await admin.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
          [app],
        );
        for (const row of rows) seen.add(row.pid);
        most = Math.max(most, rows.length);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    try {
      const worker = consumer.worker({ concurrency: 10 });
      const startedAt = Date.now();
      await worker.start();
      await waitFor(() => done >= jobs, 60_000, "the drain");
      // At least a second of maintenance ticks (ten of each leader service) while it ran.
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, 1000 - (Date.now() - startedAt))),
      );
      await worker.stop();
    } finally {
      sampling = false;
      await sampler;
      await admin.end();
    }
    // The LISTEN connection, the claim, two completion writes, the heartbeat (and its schedule
    // catch-up), the elector, the schedules' scheduler and one maintenance statement: 8 at once at
    // most (with a heartbeat every 100 ms they do meet; 4–5 in the bench's drains with the default
    // 5 s). Before the lane the pool opened all 10 (11 with LISTEN). Every connection ever opened
    // counts: the pool keeps idle ones a minute.
    expect(most).toBeGreaterThanOrEqual(2);
    expect(seen.size).toBeLessThanOrEqual(8);
  });
});
