// Workflows on PostgreSQL, the fan-in's locks (migration 033; docs/performance.md, "2026-12-07,
// round five"): a members' completion ends its edges before it locks the batch's row, and counts
// the batch and the callbacks down after. Checked here:
// - the edges are ended while another transaction holds the batch's row (the completion then
//   waits on that row, holding no callback's row);
// - completions on six connections at once, beside adds to the open batch (which lock the batch
//   and then bump the callbacks), a dead-letter move of members and the seal: no deadlock, the
//   batch and each callback count every member once, the onComplete callback is released once,
//   the onSuccess callback cancelled once (a member ended dead), the batch's finish recorded
//   once.
import pg from "pg";
import { pino } from "pino";
import { afterEach, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { Soniq } from "../../src/index.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: fan-in count-down locks", () => {
  const schemas = usePostgresSchemas();
  const closers: Array<() => Promise<void>> = [];

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  async function setup(poolSize: number) {
    const schema = schemas.next();
    const backend = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize });
    await backend.setup();
    const soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
    closers.push(() => soniq.close());
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    closers.push(() => client.end());
    const child = soniq.job<{ i: number }, void>({ name: "locks.child", handler: () => {} });
    const root = soniq.job<object, void>({ name: "locks.root", handler: () => {} });
    const good = soniq.job<object, void>({ name: "locks.good", handler: () => {} });
    return { schema, backend, soniq, client, child, root, good };
  }

  it("batch › its row locked by another transaction › a members' completion ends its edges, then waits on the batch's row only", async () => {
    const { schema, backend, soniq, client, child, root } = await setup(2);
    const batch = await soniq.batch({
      jobs: Array.from({ length: 10 }, (_, i) => ({ job: child, args: { i } })),
      onComplete: { job: root, args: {} },
    });
    const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: 10 });
    expect(claimed).toHaveLength(10);
    const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await holder.connect();
    closers.push(() => holder.end());
    await holder.query("BEGIN");
    await holder.query(
      `SELECT 1 FROM "${schema}".soniq_flow_nodes WHERE job_id = $1 AND role = 'batch' FOR UPDATE`,
      [batch.id],
    );
    const completing = backend.jobCompleteMany({
      items: claimed.map((j) => ({
        id: j.id,
        owner: { workerId: "w", claimToken: j.claimToken },
        result: null,
      })),
      resultRetentionSeconds: 3600,
    });
    // The completion's server process, waiting for a lock.
    let waiting: { pid: number }[] = [];
    for (let k = 0; k < 200 && waiting.length === 0; k += 1) {
      await new Promise((r) => setTimeout(r, 25));
      waiting = (
        await client.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'
             AND query LIKE '%' || $1 || '%'`,
          [schema],
        )
      ).rows;
    }
    expect(waiting).toHaveLength(1);
    const pid = waiting[0]?.pid;
    // It holds its ten edges (row locks are not in pg_locks: the edges' xmax is its transaction)
    // and no callback's row; it waits for the holder's transaction.
    const { rows: edges } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${schema}".soniq_job_deps AS d
       WHERE d.dep_id = ANY($1::uuid[]) AND d.xmax::text::bigint <> 0`,
      [claimed.map((j) => j.id)],
    );
    expect(edges[0]?.n).toBe(10);
    const { rows: node } = await client.query<{ locked: boolean }>(
      `SELECT xmax::text::bigint <> 0 AS locked FROM "${schema}".soniq_flow_nodes
       WHERE role = 'on_complete'`,
    );
    expect(node).toEqual([{ locked: false }]);
    const { rows: blockers } = await client.query<{ blockers: number[] }>(
      "SELECT pg_blocking_pids($1) AS blockers",
      [pid],
    );
    const { rows: holderPid } = await holder.query<{ pid: number }>(
      "SELECT pg_backend_pid() AS pid",
    );
    expect(blockers[0]?.blockers).toEqual([holderPid[0]?.pid]);
    await holder.query("COMMIT");
    expect(await completing).toEqual(Array(10).fill(true));
    const [released] = await backend.jobClaim({ workerId: "w", queues: null, limit: 10 });
    expect(released?.name).toBe("locks.root");
  });

  it("open batch › completions on six connections beside adds, dead-letter moves and the seal › no deadlock, every member counted once, each callback settled once", async () => {
    const { schema, backend, soniq, client, child, root, good } = await setup(12);
    const batch = await soniq.batch({
      jobs: Array.from({ length: 300 }, (_, i) => ({ job: child, args: { i } })),
      onComplete: { job: root, args: {} },
      onSuccess: { job: good, args: {} },
      open: true,
    });
    let added = 300;
    let deadLettered = 0;
    let completed = 0;
    const errors: unknown[] = [];
    /** One worker: claims up to 25 members at a time and completes them in one statement. */
    const worker = async (w: number) => {
      for (;;) {
        // Read before the claim: once every add is in, an empty claim means no member is left.
        const allAdded = added >= 900;
        const claimed = (
          await backend.jobClaim({ workerId: `w${w}`, queues: null, limit: 25 })
        ).filter((j) => j.name === "locks.child");
        if (claimed.length === 0) {
          if (allAdded) return;
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        // Worker 0 dead-letters one member per claim, once.
        if (w === 0 && deadLettered === 0) {
          const [first, ...rest] = claimed;
          if (first) {
            const moved = await backend.jobDeadLetter({
              id: first.id,
              owner: { workerId: `w${w}`, claimToken: first.claimToken },
              error: "boom",
              reason: "test",
              countAttempt: true,
            });
            if (moved) deadLettered += 1;
          }
          claimed.splice(0, claimed.length, ...rest);
        }
        const changed = await backend.jobCompleteMany({
          items: claimed.map((j) => ({
            id: j.id,
            owner: { workerId: `w${w}`, claimToken: j.claimToken },
            result: JSON.stringify({ i: w }),
          })),
          resultRetentionSeconds: 3600,
        });
        completed += changed.filter(Boolean).length;
      }
    };
    /** Adds 600 members, 50 at a time, while the workers complete. */
    const adder = async () => {
      while (added < 900) {
        await batch.add(
          Array.from({ length: 50 }, (_, k) => ({ job: child, args: { i: added + k } })),
        );
        added += 50;
        await new Promise((r) => setTimeout(r, 3));
      }
    };
    await Promise.all([
      ...Array.from({ length: 6 }, (_, w) => worker(w).catch((e) => errors.push(e))),
      adder().catch((e) => errors.push(e)),
    ]);
    expect(errors).toEqual([]);
    expect(await batch.seal()).toBe(true);
    expect(deadLettered).toBe(1);
    expect(completed).toBe(899);

    const { rows: nodes } = await client.query(
      `SELECT role, pending, members_left, members_failed FROM "${schema}".soniq_flow_nodes
       WHERE role IN ('batch', 'on_complete', 'on_success') ORDER BY role`,
    );
    expect(nodes).toEqual([
      { role: "batch", pending: 0, members_left: 0, members_failed: 1 },
      { role: "on_complete", pending: 0, members_left: 0, members_failed: 0 },
      // The dead member failed it: cancelled at that end.
      expect.objectContaining({ role: "on_success" }),
    ]);
    const { rows: ends } = await client.query(
      `SELECT kind, outcome, count(*)::int AS n FROM "${schema}".soniq_flow_ends
       GROUP BY kind, outcome ORDER BY kind, outcome`,
    );
    expect(ends).toEqual([{ kind: "batch", outcome: "failed", n: 1 }]);
    const { rows: edges } = await client.query(
      `SELECT j.name, d.dep_state, count(*)::int AS n
       FROM "${schema}".soniq_job_deps AS d
       JOIN "${schema}".soniq_flow_nodes AS c ON c.job_id = d.job_id
       LEFT JOIN "${schema}".soniq_jobs AS j ON j.id = d.job_id
       WHERE c.role = 'on_complete' GROUP BY j.name, d.dep_state ORDER BY d.dep_state`,
    );
    // 899 members done, 1 dead, the seal's edge done.
    expect(edges).toEqual([
      { name: "locks.root", dep_state: "dead", n: 1 },
      { name: "locks.root", dep_state: "done", n: 900 },
    ]);
    const { rows: dead } = await client.query(
      `SELECT name, reason FROM "${schema}".soniq_dead_letter_jobs ORDER BY name`,
    );
    expect(dead).toEqual([{ name: "locks.child", reason: "test" }]);
    // The onSuccess callback: cancelled once, at the dead member's end.
    const { rows: cancelled } = await client.query(
      `SELECT name, status FROM "${schema}".soniq_finished_jobs WHERE name <> 'locks.child'`,
    );
    expect(cancelled).toEqual([{ name: "locks.good", status: "cancelled" }]);
    const released = await backend.jobClaim({ workerId: "w", queues: null, limit: 10 });
    expect(released.map((j) => j.name)).toEqual(["locks.root"]);
  });
});
