// The plans of the hot statements, with the statistics a queue table usually has: taken while
// it was nearly empty, then a burst of jobs. A claim must walk soniq_jobs_claim_idx in order
// (not collect and sort every due row), a one-queue claim soniq_jobs_queue_claim_idx from that
// queue's first row, and a finishing write must find its row by primary key
// (not walk soniq_jobs_processing_idx, which keeps an entry for every row the worker claimed
// since the last vacuum). Custom plans (a prepared statement's first runs) and generic ones.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyedClaimStatements } from "../../src/backends/postgres/keyed-claim.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import {
  buildAdminStatements,
  buildStatements,
  SESSION_SETUP,
} from "../../src/backends/postgres/sql.js";
import { newJob } from "../contract/helpers.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { fillQueued } from "../helpers/postgres-fill.js";
import { preparedPlans, preparedPlansText } from "../helpers/postgres-plans.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: plans of the hot statements", () => {
  const schema = usePostgresSchemas().next();
  const sql = buildStatements(schema);
  let backend: PostgresBackend;
  let client: pg.Client;

  /** The plans of `text` as a custom plan (a statement's first runs) and as a generic one. */
  const plan = (name: string, types: string, text: string, args: string) =>
    preparedPlansText(client, name, types, text, args);

  beforeAll(async () => {
    backend = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });
    await backend.setup();
    client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`ANALYZE ${schema}.soniq_jobs`); // statistics of an empty queue
    for (let i = 0; i < 5; i++) {
      await backend.jobEnqueue({ jobs: Array.from({ length: 1000 }, () => newJob()) });
    }
    await backend.jobClaim({ workerId: "w", queues: null, limit: 2000 });
    await client.query(SESSION_SETUP);
  }, 60_000);

  afterAll(async () => {
    await client?.end();
    await backend?.close();
  });

  it("a claim walks the claim index in order and stops at the limit", async () => {
    const text = await plan(
      "claim_all",
      "text, int, boolean, text[], int[]",
      sql.claimAll,
      `'w2', 100, false, ${NAMES}, ${VERSIONS}`,
    );
    expect(text).toContain("Index Scan using soniq_jobs_claim_idx");
    expect(text).not.toContain("Bitmap");
    expect(text).not.toMatch(/Sort Key: soniq_jobs\.priority/);
    // One queue: walked in order from the queue-leading index, other queues' rows never read.
    const one = await plan(
      "claim_queue",
      "text, int, text, boolean, text[], int[]",
      sql.claimQueue,
      `'w2', 100, 'default', false, ${NAMES}, ${VERSIONS}`,
    );
    expect(one).toContain("Index Scan using soniq_jobs_queue_claim_idx");
    expect(one).toMatch(/Index Cond: \(\(queue = \$3\)/);
    expect(one).not.toMatch(/Sort Key: soniq_jobs\.priority/);
    expect(one).not.toContain("Bitmap");
    // Several queues: either index, but never a bitmap scan.
    const several = await plan(
      "claim_queues",
      "text, int, text[], boolean, text[], int[]",
      sql.claimQueues,
      `'w2', 100, '{default,other}', false, ${NAMES}, ${VERSIONS}`,
    );
    expect(several).not.toContain("Bitmap");
  });

  /**
   * The plans of the statements migration 028's `soniq_keyed_claim` runs for one keyed claim
   * (the statement Soniq sends, `claimFunction`; rolled back) under `mode`: each nested
   * statement's plan as `auto_explain` writes it (`Query Text:` then the plan), in the order
   * they ran.
   */
  const keyedClaimPlans = async (
    mode: "force_custom_plan" | "force_generic_plan",
    limit: number,
    cursor: string | null,
  ): Promise<string[]> => {
    const explain = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await explain.connect();
    const plans: string[] = [];
    explain.on("notice", (notice) => {
      if (notice.message?.includes("Query Text:")) plans.push(notice.message);
    });
    try {
      await explain.query(`LOAD 'auto_explain'`);
      await explain.query(
        `SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on;
         SET auto_explain.log_level = notice; SET plan_cache_mode = ${mode}`,
      );
      await explain.query("BEGIN");
      await explain.query(keyedClaimStatements(schema).claimFunction, [
        "w2",
        limit,
        null,
        true,
        ["plan.keyed", "mail.send"],
        [1, 2],
        cursor,
        "plan-test",
        true,
        false,
        true,
      ]);
      await explain.query("ROLLBACK");
    } finally {
      await explain.end();
    }
    return plans;
  };

  /** The plan in `plans` of the statement whose text starts with `start`. */
  const planOf = (plans: string[], start: RegExp): string => {
    const found = plans.find((text) =>
      start.test(text.slice(text.indexOf("Query Text:") + 11).trim()),
    );
    expect(found, String(start)).toBeDefined();
    return found ?? "";
  };

  it("the keyed claim's updates reach their rows by primary key, not by a partial index of queued rows", async () => {
    // Found in a keyed drain: with `AND j.status = 'queued'` beside the id list, the planner
    // (statistics of a nearly empty table) read soniq_jobs_queue_claim_idx whole for the ids, 300
    // ms for a claim of 510 over 10,000 queued jobs. A claim larger than the keys runs both
    // passes, each followed by the claim statement.
    await backend.jobEnqueue({
      jobs: Array.from({ length: 40 }, (_, i) =>
        newJob({
          name: "plan.keyed",
          meta: JSON.stringify({ concurrency: { key: `k${i % 20}`, limit: 2 } }),
        }),
      ),
    });
    for (const mode of ["force_custom_plan", "force_generic_plan"] as const) {
      const plans = await keyedClaimPlans(mode, 500, null);
      expect(plans.some((text) => /Query Text:\s*WITH RECURSIVE keys/.test(text))).toBe(true);
      const updates = plans.filter((text) => /Query Text:\s*WITH claimed AS/.test(text));
      expect(updates).toHaveLength(2);
      for (const text of updates) {
        const update = text.slice(text.indexOf("Update on soniq_jobs"));
        expect(update).toContain("soniq_jobs_pkey");
        expect(update.split("CTE charged")[0]).not.toContain("soniq_jobs_queue_claim_idx");
      }
    }
  });

  it("the keyed claim statement's answer about due jobs without a key reads soniq_jobs_claim_idx in order, never the table", async () => {
    // `unkeyed_due` (keyed-claim.ts, asked by `$11`): during a backlog of keyed jobs only, the
    // claim index holds no live entry, so the answer is its walk; a scan of soniq_jobs would read
    // the backlog.
    const text = await plan(
      "keyed_claim",
      "text, int, text[], boolean, text[], int[], text, text, boolean, boolean, boolean",
      keyedClaimStatements(schema).claimFunction,
      `'w2', 100, NULL, true, ${NAMES}, ${VERSIONS}, NULL, 'plan-test', true, false, true`,
    );
    for (const mode of text.split(/^force_generic_plan:$/m)) {
      expect(mode).toMatch(/Index (Only )?Scan using soniq_jobs_claim_idx on soniq_jobs u/);
      expect(mode).not.toContain("Seq Scan on soniq_jobs");
    }
  });

  it("the rotating pass starts its key walk at the cursor by index condition, generic plan too", async () => {
    // Sent as a named statement, the pass ran on the server's generic plan after five runs. With
    // `$8 IS NULL OR key > $8` in one text, that plan read the keyed index from its first key up
    // to the cursor (a filter, not an index condition): 4,480 rows, 9.7 ms of a claim of 180 in
    // the keyed drain. The function's pass compares with COALESCE(cursor, '') instead (no cursor:
    // from the first key); PL/pgSQL keeps its plan, generic from the first call (migration 028).
    for (const mode of ["force_custom_plan", "force_generic_plan"] as const) {
      const plans = await keyedClaimPlans(mode, 3, "k5");
      const rotate = planOf(plans, /^WITH RECURSIVE after_keys/);
      const plan = rotate.slice(rotate.indexOf("\n", rotate.indexOf("SELECT ARRAY")));
      // The anchor's scan of the keyed index: its condition and filter lines (up to its subplan
      // or the next node).
      const from = plan.slice(plan.indexOf("CTE after_keys"));
      const scan = from.slice(from.indexOf("Index Scan using soniq_jobs_keyed_claim_idx"));
      const anchor = scan.split("\n").slice(1);
      const own = anchor
        .slice(
          0,
          anchor.findIndex((line) => /^\s*(SubPlan|->)/.test(line)),
        )
        .join("\n");
      // The function's generic plan whatever the session's mode (its own plan_cache_mode).
      expect(own).toMatch(/Index Cond: \(.*> \$\d+\)/);
      expect(own).not.toContain("Filter");
    }
  });

  it("batched and single finishing writes find the row by primary key", async () => {
    const many = await plan(
      "complete_many",
      "text, text, text, text[], float8, int",
      sql.completeMany,
      "'', 'w', '', NULL, 60, 0",
    );
    expect(many).toContain("soniq_jobs_pkey");
    expect(many).not.toContain("soniq_jobs_processing_idx");
    const one = await plan(
      "complete_one",
      "uuid, text, uuid, text, float8",
      sql.complete,
      [
        "'00000000-0000-4000-8000-000000000000'",
        "'w'",
        "'00000000-0000-4000-8000-000000000000'",
        "NULL",
        "60",
      ].join(", "),
    );
    expect(one).toContain("soniq_jobs_pkey");
    expect(one).not.toContain("soniq_jobs_processing_idx");
  });
});

// The plans a drain gets: statistics taken while the queue was full (fill, ANALYZE, then claim —
// the state of a table after earlier bursts), arrays of a real batch's size (200), at 1k, 20k
// and 1M rows, custom and generic plans. No hot statement may read soniq_jobs by a sequential
// scan: a claim's UPDATE reaches its rows by primary-key probes, and a batched finishing write
// by primary key whatever the estimates (what the other plans cost: docs/performance.md, "Why the
// hot statements look as they do").
const BATCH = 200;

/** A PostgreSQL array literal of `values`. */
function arrayLiteral(values: readonly string[]): string {
  return `'{${values.map((v) => `"${v}"`).join(",")}}'`;
}

/** A hot statement to plan: parameter types and literal arguments from the claimed batch. */
interface Hot {
  name: string;
  types: string;
  text: (sql: ReturnType<typeof buildStatements>) => string;
  args: (batch: { ids: string[]; tokens: string[]; worker: string }) => string;
  /** The primary key must drive the statement (it reaches rows by id). */
  byPrimaryKey: boolean;
  /** A line every plan must have: how the rows of `soniq_jobs` are reached. */
  reaches?: RegExp;
}

/** A claim's UPDATE probes the primary key with the picked ids (no join, no table scan). */
const CLAIM_UPDATE =
  /Update on soniq_jobs j\n(?:.*\n)*? {8,}-> {2}Index Scan using soniq_jobs_pkey on soniq_jobs j\n\s+Index Cond: \(id = ANY /;

/** The job names a worker's claim passes (the rows are all `plan.noop`). */
const NAMES = "'{plan.noop,mail.send,report.build}'";

/** The highest version the claiming worker runs of each of {@link NAMES}, in the same order. */
const VERSIONS = "'{1,2,1}'";

const HOT: Hot[] = [
  {
    name: "claim_all",
    reaches: CLAIM_UPDATE,
    types: "text, int, boolean, text[], int[]",
    text: (sql) => sql.claimAll,
    args: () => `'w2', ${BATCH}, false, ${NAMES}, ${VERSIONS}`,
    byPrimaryKey: true,
  },
  {
    name: "claim_queue",
    reaches: CLAIM_UPDATE,
    types: "text, int, text, boolean, text[], int[]",
    text: (sql) => sql.claimQueue,
    args: () => `'w2', ${BATCH}, 'default', false, ${NAMES}, ${VERSIONS}`,
    byPrimaryKey: true,
  },
  {
    name: "claim_queues",
    reaches: CLAIM_UPDATE,
    types: "text, int, text[], boolean, text[], int[]",
    text: (sql) => sql.claimQueues,
    args: () => `'w2', ${BATCH}, '{default,other}', false, ${NAMES}, ${VERSIONS}`,
    byPrimaryKey: true,
  },
  {
    name: "claim_limited",
    reaches: CLAIM_UPDATE,
    types: "text, int, text, boolean, text[], int[]",
    text: (sql) => sql.claimLimited,
    args: () => `'w2', ${BATCH}, 'default', false, ${NAMES}, ${VERSIONS}`,
    byPrimaryKey: true,
  },
  {
    name: "complete_many",
    // Driven by the batch, one probe per row: never a join filter comparing every row with
    // every batch entry (200 × 200), never a hash of the table.
    reaches: /Index Cond: \(id = b\.id\)/,
    types: "text, text, text, text[], float8, int",
    text: (sql) => sql.completeMany,
    args: (b) =>
      [
        `'${b.ids.join(",")}'`,
        `'${b.worker}'`,
        `'${b.tokens.join(",")}'`,
        arrayLiteral(b.ids.map(() => "null")),
        "60",
        String(b.ids.length),
      ].join(", "),
    byPrimaryKey: true,
  },
  {
    name: "complete_one",
    types: "uuid, text, uuid, text, float8",
    text: (sql) => sql.complete,
    args: (b) => `'${b.ids[0]}', '${b.worker}', '${b.tokens[0]}', NULL, 60`,
    byPrimaryKey: true,
  },
  {
    name: "retry_one",
    types: "uuid, text, uuid, text, float8",
    text: (sql) => sql.retry,
    args: (b) => `'${b.ids[0]}', '${b.worker}', '${b.tokens[0]}', 'boom', 1`,
    byPrimaryKey: true,
  },
  {
    name: "nack_one",
    types: "uuid, text, uuid, text",
    text: (sql) => sql.nack,
    args: (b) => `'${b.ids[0]}', '${b.worker}', '${b.tokens[0]}', 'soniq_x'`,
    byPrimaryKey: true,
  },
  {
    name: "mark_started",
    types: "uuid, text, uuid",
    text: (sql) => sql.markStarted,
    args: (b) => `'${b.ids[0]}', '${b.worker}', '${b.tokens[0]}'`,
    byPrimaryKey: true,
  },
  {
    name: "dead_letter_one",
    types: "uuid, text, uuid, text, text, boolean",
    text: (sql) => sql.deadLetter,
    args: (b) => `'${b.ids[0]}', '${b.worker}', '${b.tokens[0]}', 'boom', 'max_attempts', true`,
    byPrimaryKey: true,
  },
  {
    // Crash recovery's read: the processing rows (their partial index), never the queued ones.
    name: "stale_claims",
    reaches: /Index Scan using soniq_jobs_processing_idx on soniq_jobs j/,
    types: "float8, text",
    text: (sql) => sql.staleClaims,
    args: () => "30, NULL",
    byPrimaryKey: false,
  },
  {
    // Crash recovery's write: each row of the batch locked and written by primary key.
    name: "recover_stale",
    types: "uuid[], text[], uuid[], text[], int[], boolean[], text[], text, float8, text",
    text: (sql) => sql.recoverStale,
    args: (b) =>
      [
        arrayLiteral(b.ids),
        arrayLiteral(b.ids.map(() => b.worker)),
        arrayLiteral(b.tokens),
        arrayLiteral(b.ids.map((_, i) => ["cancel", "requeue", "deadLetter"][i % 3] ?? "requeue")),
        arrayLiteral(b.ids.map(() => "1")),
        arrayLiteral(b.ids.map(() => "true")),
        arrayLiteral(b.ids.map(() => "crash_loop")),
        "'crash_loop'",
        "60",
        "'soniq_x'",
      ].join(", "),
    byPrimaryKey: true,
  },
  {
    name: "owned_by",
    types: "text",
    text: (sql) => sql.ownedBy,
    args: (b) => `'${b.worker}'`,
    byPrimaryKey: false,
  },
];

describePostgres(
  "postgres: plans of the hot statements after a fill, with a full queue's statistics",
  () => {
    const schemas = usePostgresSchemas();

    for (const size of [1_000, 20_000, 1_000_000]) {
      describe(`${size.toLocaleString("en")} rows`, () => {
        const schema = schemas.next();
        const sql = buildStatements(schema);
        const admin = buildAdminStatements(schema);
        let backend: PostgresBackend;
        let client: pg.Client;
        let batch: { ids: string[]; tokens: string[]; worker: string };

        /** The custom and generic plans of `statement` (prepared under a fresh name). */
        const plans = (name: string, types: string, text: string, args: string) =>
          preparedPlans(client, name, types, text, args);

        beforeAll(async () => {
          backend = new PostgresBackend({
            connectionString: TEST_DATABASE_URL,
            schema,
            poolSize: 2,
          });
          await backend.setup();
          client = new pg.Client({ connectionString: TEST_DATABASE_URL });
          await client.connect();
          // No autovacuum/autoanalyze between the fill's statistics and the plans.
          await client.query(`ALTER TABLE ${schema}.soniq_jobs SET (autovacuum_enabled = false)`);
          await fillQueued(client, schema, { rows: size });
          await client.query(`ANALYZE ${schema}.soniq_jobs`); // statistics of a full queue
          const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: BATCH });
          expect(claimed).toHaveLength(BATCH);
          batch = {
            ids: claimed.map((j) => j.id),
            tokens: claimed.map((j) => j.claimToken),
            worker: "w",
          };
          await client.query(SESSION_SETUP); // the settings of the worker's pool connections
        }, 120_000);

        afterAll(async () => {
          await client?.end();
          await backend?.close();
        });

        it.each(HOT)("$name never scans soniq_jobs sequentially", async (hot) => {
          const text = hot.text(sql);
          for (const { mode, plan } of await plans(hot.name, hot.types, text, hot.args(batch))) {
            const where = `${hot.name}, ${mode}, ${size} rows:\n${plan}`;
            expect(plan, where).not.toMatch(/Seq Scan on soniq_jobs\b/);
            if (hot.byPrimaryKey) expect(plan, where).toMatch(/soniq_jobs_pkey/);
            if (hot.reaches) expect(plan, where).toMatch(hot.reaches);
          }
        });

        it("the heartbeat's progress and cancel look-ups never scan soniq_jobs sequentially", async () => {
          const args = [
            `'${batch.worker}'`,
            "'running'",
            "'RUNNING'",
            "NULL",
            "NULL",
            arrayLiteral(batch.ids),
            arrayLiteral(batch.tokens),
            arrayLiteral(batch.ids.map(() => "0.5")),
            arrayLiteral(batch.ids.map(() => "half")),
          ].join(", ");
          const types = "text, text, text, float8, float8, uuid[], uuid[], float8[], text[]";
          for (const { mode, plan } of await plans("worker_beat", types, admin.workerBeat, args)) {
            expect(plan, `worker_beat, ${mode}, ${size} rows:\n${plan}`).not.toMatch(
              /Seq Scan on soniq_jobs\b/,
            );
          }
        });
      });
    }
  },
);
