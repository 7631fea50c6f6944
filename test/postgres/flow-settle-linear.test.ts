// Workflows on PostgreSQL, the fan-in's end of edges (migrations 025 and 026; docs/performance.md,
// "2026-12-07, round three").
//
// 1. A connection's first finishing statements of members are small (one member each), the next
//    one large: PL/pgSQL keeps a plan made for the small ones. Before migration 025 the UPDATE of
//    the ended edges joined them with the statement's transition table (`ended`), and that kept
//    plan rescanned `ended` once per edge (400 members: 400 scans of 400 rows). auto_explain
//    (its plans sent to this session as notices) shows every plan the triggers ran: no
//    transition table is scanned more than once. The callback's count-down stays right.
// 2. The release of the callback by a completion on the backend's own pool wakes this process's
//    claims for its queue by the time the completion has answered (migration 026's NOTICE), not
//    50 ms later (its NOTIFY, held as a possible echo of a local wake-up: notifier.ts).
// 3. The members' completions read the flow tables by key (migration 030): before it, the
//    planner read the whole of soniq_flow_nodes twice and soniq_job_deps once per completion
//    statement (a scan rated cheaper than 150 probes of a small table), so each member's end
//    read ~3 × members / 150 rows; and each ended edge's update is a heap-only tuple (the edges'
//    pages keep room: fillfactor 50), no new index entries.
// 4. The pruner's flow-retention step keeps a batch whose members are running at its first live
//    member: it read every member and looked each up (a worker's first tick ran inside the
//    fan-in). A batch whose jobs are all gone is still forgotten whole.
import pg from "pg";
import { pino } from "pino";
import { afterEach, expect, it } from "vitest";
import { buildFlowStatements } from "../../src/backends/postgres/flow-sql.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { buildStatements } from "../../src/backends/postgres/sql.js";
import { Soniq } from "../../src/index.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: fan-in edge ends", () => {
  const schemas = usePostgresSchemas();
  const closers: Array<() => Promise<void>> = [];

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  async function open(members: number) {
    const schema = schemas.next();
    const backend = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema,
      poolSize: 2,
    });
    await backend.setup();
    const soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
    closers.push(() => soniq.close());
    const child = soniq.job<{ i: number }, void>({ name: "linear.child", handler: () => {} });
    const root = soniq.job<object, void>({ name: "linear.root", handler: () => {} });
    await soniq.batch({
      jobs: Array.from({ length: members }, (_, i) => ({ job: child, args: { i } })),
      onComplete: { job: root, args: {} },
    });
    return { schema, backend };
  }

  it("batch of 407 › seven completions of one member, then one of 400, on one connection › no transition table rescanned; the callback released once", async (ctx) => {
    const { schema, backend } = await open(407);
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    closers.push(() => client.end());
    try {
      await client.query("LOAD 'auto_explain'");
    } catch {
      ctx.skip(); // auto_explain needs a superuser (or the library in $libdir/plugins)
    }
    const plans: string[] = [];
    client.on("notice", (n) => {
      if (typeof n.message === "string") plans.push(n.message);
    });
    await client.query(`SET auto_explain.log_min_duration = 0;
      SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off;
      SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice`);
    const completeMany = buildStatements(schema).completeMany;
    const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: 407 });
    expect(claimed).toHaveLength(407);
    const complete = async (jobs: typeof claimed) => {
      const { rows } = await client.query(completeMany, [
        jobs.map((j) => j.id).join(","),
        "w",
        jobs.map((j) => j.claimToken).join(","),
        null,
        3600,
        jobs.length,
      ]);
      expect(rows[0]?.changed).toBe(jobs.length);
    };
    for (const job of claimed.slice(0, 7)) await complete([job]);
    plans.length = 0;
    await complete(claimed.slice(7));

    const rescans = plans
      .join("\n")
      .split("\n")
      .filter((line) => /Named Tuplestore Scan/.test(line) && !/loops=1\)/.test(line));
    expect(plans.length).toBeGreaterThan(3); // the statement and the triggers' statements
    // Before migration 025: "Named Tuplestore Scan … (actual rows=400 loops=400)".
    expect(rescans).toEqual([]);
    const { rows } = await client.query(
      `SELECT n.pending, j.scheduled_at < now() + interval '1 day' AS due
       FROM "${schema}".soniq_flow_nodes AS n JOIN "${schema}".soniq_jobs AS j ON j.id = n.job_id
       WHERE n.role = 'on_complete'`,
    );
    expect(rows).toEqual([{ pending: 0, due: true }]);
  });

  it("batch of 1,200 › completed in statements of 150 in one transaction › flow tables read by key (≤ 8 rows per member), every ended edge updated in place (HOT); the callback released once", async () => {
    const members = 1200;
    const { schema, backend } = await open(members);
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    closers.push(() => client.end());
    const completeMany = buildStatements(schema).completeMany;
    const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: members });
    expect(claimed).toHaveLength(members);
    await client.query("BEGIN");
    for (let at = 0; at < members; at += 150) {
      const part = claimed.slice(at, at + 150);
      const { rows } = await client.query(completeMany, [
        part.map((j) => j.id).join(","),
        "w",
        part.map((j) => j.claimToken).join(","),
        null,
        3600,
        part.length,
      ]);
      expect(rows[0]?.changed).toBe(part.length);
    }
    // This transaction's own reads and writes of the two tables (its triggers' statements).
    const { rows: stats } = await client.query<{
      relname: string;
      read: number;
      upd: number;
      hot: number;
    }>(
      `SELECT relname, (COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0))::int AS read,
         n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot
       FROM pg_stat_xact_user_tables
       WHERE schemaname = $1 AND relname IN ('soniq_flow_nodes', 'soniq_job_deps')
       ORDER BY relname`,
      [schema],
    );
    await client.query("COMMIT");
    const read = stats.reduce((a, r) => a + r.read, 0);
    // Before migration 030: ~3 × 1,200 rows per statement of 150, 24 per member.
    expect(read).toBeLessThanOrEqual(8 * members);
    const edges = stats.find((r) => r.relname === "soniq_job_deps");
    expect(edges?.upd).toBe(members); // each member's edge to the callback, once
    // Before migration 030: 0 (the edges' pages were full).
    expect(edges?.hot).toBeGreaterThanOrEqual(0.85 * members); // not all: the new rows are longer
    const { rows } = await client.query(
      `SELECT n.pending, j.scheduled_at < now() + interval '1 day' AS due
       FROM "${schema}".soniq_flow_nodes AS n JOIN "${schema}".soniq_jobs AS j ON j.id = n.job_id
       WHERE n.role = 'on_complete'`,
    );
    expect(rows).toEqual([{ pending: 0, due: true }]);
  });

  it("batch of 2,000 running › one flow-retention step › kept after a few lookups (not one per member); once every job is gone › forgotten, nodes and edges", async () => {
    const members = 2000;
    const { schema } = await open(members);
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    closers.push(() => client.end());
    const { prune } = buildFlowStatements(schema);
    const step = async () => {
      await client.query("BEGIN");
      const { rows } = await client.query<{ pruned: number; edges: number }>(prune, [null, 10_000]);
      const { rows: stats } = await client.query<{ fetched: number }>(
        `SELECT (COALESCE(idx_tup_fetch, 0) + COALESCE(seq_tup_read, 0))::int AS fetched
         FROM pg_stat_xact_user_tables WHERE schemaname = $1 AND relname = 'soniq_jobs'`,
        [schema],
      );
      await client.query("COMMIT");
      return { ...rows[0], jobsRead: stats[0]?.fetched ?? 0 };
    };
    const kept = await step();
    expect(kept.pruned).toBe(0);
    // Before: one lookup per member (2,000; each found live).
    expect(kept.jobsRead).toBeLessThanOrEqual(10);
    await client.query(`DELETE FROM "${schema}".soniq_jobs`);
    const gone = await step();
    expect(gone.pruned).toBe(members + 2); // the members, the batch, the callback
    expect(gone.edges).toBe(members); // the callback's edge to each member
  });

  it("batch of 3 › the last member completed on the pool › its callback's queue woken when the completion answers", async () => {
    const { backend } = await open(3);
    const woken: string[] = [];
    const unsubscribe = backend.notifier.subscribe((queue) => {
      // "*" is the LISTEN's own wake-up once it is in place, not a release.
      if (queue !== "*") woken.push(queue);
    });
    closers.push(async () => unsubscribe());
    const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: 3 });
    expect(claimed).toHaveLength(3);
    const items = claimed.map((j) => ({
      id: j.id,
      owner: { workerId: "w", claimToken: j.claimToken },
      result: null,
    }));
    await backend.jobCompleteMany({ items: items.slice(0, 2), resultRetentionSeconds: 3600 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(woken).toEqual([]); // nothing released yet
    await backend.jobCompleteMany({ items: items.slice(2), resultRetentionSeconds: 3600 });
    await new Promise((resolve) => setImmediate(resolve));
    // Before migration 026: [] here (the NOTIFY of the pool's own connection is held 50 ms).
    expect(woken).toEqual(["default"]);
    const [released] = await backend.jobClaim({ workerId: "w", queues: null, limit: 1 });
    expect(released?.name).toBe("linear.root");
  });
});
