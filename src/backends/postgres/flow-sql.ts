/**
 * The PostgreSQL statements of workflows (contract/flow-store.ts; migration 019), for one schema.
 * The release itself is the migration's triggers; these insert the graph and read it back.
 */
import { quoteIdent } from "./identifiers.js";

/** The waiting instant of a job with dependencies not yet met (migration 019). */
export const PG_WAITING_AT = "9999-12-31 23:59:59.999999+00";

/** Builds the flow statements for `schema` (already validated). */
export function buildFlowStatements(schema: string) {
  const s = quoteIdent(schema);
  const jobs = `${s}.${quoteIdent("soniq_jobs")}`;
  const finished = `${s}.${quoteIdent("soniq_finished_jobs")}`;
  const dead = `${s}.${quoteIdent("soniq_dead_letter_jobs")}`;
  const nodes = `${s}.${quoteIdent("soniq_flow_nodes")}`;
  const deps = `${s}.${quoteIdent("soniq_job_deps")}`;
  const ends = `${s}.${quoteIdent("soniq_flow_ends")}`;
  const counts = `${s}.${quoteIdent("soniq_flow_counts")}`;
  /**
   * Node `n` keeps its group: an open batch, or a job still stored (by id in each table). Each
   * `EXISTS` is kept a probe by `OFFSET 0`: without it the planner may turn it into a hash of the
   * whole table (every live job read to test one group).
   */
  const keeps = `((n.role = 'batch' AND n.pending > 0)
      OR (n.role <> 'batch' AND (
        EXISTS (SELECT 1 FROM ${jobs} AS j WHERE j.id = n.job_id OFFSET 0)
        OR EXISTS (SELECT 1 FROM ${finished} AS f WHERE f.id = n.job_id OFFSET 0)
        OR EXISTS (SELECT 1 FROM ${dead} AS d WHERE d.id = n.job_id OFFSET 0))))`;
  return {
    /**
     * `$1` ids uuid[] → `id` of those that are live, each locked `FOR KEY SHARE` (its end — a
     * DELETE — waits for this transaction; its claim does not).
     */
    lockLive: `SELECT id::text AS id FROM ${jobs} WHERE id = ANY($1::uuid[]) FOR KEY SHARE`,

    /**
     * `$1` ids uuid[] → `id`, `state` (done, cancelled, dead) and `result` (JSON text) of those
     * that ended and are still stored (a fresh snapshot: ends committed while {@link lockLive}
     * waited are seen).
     */
    ended: `SELECT id::text AS id, status AS state, result::text AS result
      FROM ${finished} WHERE id = ANY($1::uuid[])
      UNION ALL
      SELECT id::text, 'dead', NULL FROM ${dead} WHERE id = ANY($1::uuid[])`,

    /**
     * `$1` job ids uuid[], `$2` flow ids uuid[], `$3` waiting bool[], `$4` runAt timestamptz[]
     * (NULL: now plus `$5`), `$5` delay seconds float8[], `$6` pending int[], `$7` retention
     * seconds float8[], `$8` roles text[] (zipped): one node per job (or batch); a waiting job's
     * `run_at` is its own due time; a batch's node counts the members of the call as not ended
     * (`members_left`, migration 022).
     */
    insertNodes: `INSERT INTO ${nodes} (job_id, flow_id, run_at, pending, retention_s, role,
        members_left)
      SELECT n.id, n.flow, CASE WHEN n.waiting THEN COALESCE(n.run_at, now() + make_interval(secs => n.delay)) END,
             n.pending, n.keep, n.role,
             CASE WHEN n.role = 'batch'
                  THEN (SELECT count(*) FROM unnest($8::text[]) AS r(x) WHERE r.x = 'member')::int
                  ELSE 0 END
      FROM unnest($1::uuid[], $2::uuid[], $3::bool[], $4::timestamptz[], $5::float8[], $6::int[],
                  $7::float8[], $8::text[]) AS n(id, flow, waiting, run_at, delay, pending, keep, role)`,

    /**
     * `$1` batch id → `pending` (1 open, 0 sealed) of the batch's node, locked: an add and a seal
     * of one batch take turns.
     */
    batchLock: `SELECT pending FROM ${nodes} WHERE job_id = $1::uuid AND role = 'batch' FOR UPDATE`,

    /** `$1` batch id → its node's `pending` (1 open, 0 sealed) when the batch exists. */
    batchExists: `SELECT pending FROM ${nodes} WHERE job_id = $1::uuid AND role = 'batch'`,

    /**
     * `$1` batch id → its callbacks still waiting for the seal: `job_id`, `role` (which gives the
     * policy of their edges to a member added now: shared/flow-graph.ts `memberEdgePolicy`).
     */
    batchCallbacks: `SELECT d.job_id::text AS job_id, n.role FROM ${deps} AS d
      JOIN ${nodes} AS n ON n.job_id = d.job_id
      WHERE d.dep_id = $1::uuid AND d.dep_state IS NULL`,

    /** `$1` batch id, `$2` members added: counted as not ended on the batch's node. */
    batchGrow: `UPDATE ${nodes} SET members_left = members_left + $2::int
      WHERE job_id = $1::uuid AND role = 'batch'`,

    /** `$1` callback ids uuid[], `$2` how many more each waits for. */
    batchBump: `UPDATE ${nodes} SET pending = pending + $2::int WHERE job_id = ANY($1::uuid[])`,

    /**
     * `$1` batch id: seals it — its node's `pending` to 0 and its seal edges met (the edge
     * trigger releases, or cancels, each callback whose members all ended), when it was open and
     * has a member. → `sealed` 1 when it sealed it.
     */
    batchSeal: `WITH sealed AS (
        UPDATE ${nodes} SET pending = 0 WHERE job_id = $1::uuid AND role = 'batch' AND pending > 0
          AND EXISTS (SELECT 1 FROM ${nodes} WHERE flow_id = $1::uuid AND role = 'member')
        RETURNING job_id
      ), met AS (
        UPDATE ${deps} SET dep_state = 'done'
        WHERE dep_id = $1::uuid AND dep_state IS NULL AND EXISTS (SELECT 1 FROM sealed)
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM sealed)::int AS sealed, (SELECT count(*) FROM met)::int AS met`,

    /** `$1` ids uuid[]: those just inserted (not due) become waiting. */
    markWaiting: `UPDATE ${jobs} SET scheduled_at = '${PG_WAITING_AT}'::timestamptz
      WHERE id = ANY($1::uuid[]) AND status = 'queued'`,

    /** `$1` job ids uuid[], `$2` dependency ids uuid[], `$3` policies text[] (zipped). */
    insertEdges: `INSERT INTO ${deps} (job_id, dep_id, on_failure)
      SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[])`,

    /**
     * `$1` dependency ids uuid[], `$2` states text[], `$3` results text[] (zipped), `$4` the new
     * jobs uuid[]: records ends that happened before the enqueue on the new edges; the edge
     * trigger settles each dependant as for a later end.
     */
    settleEnded: `UPDATE ${deps} AS e SET dep_state = t.state, dep_result = t.result::json
      FROM unnest($1::uuid[], $2::text[], $3::text[]) AS t(id, state, result)
      WHERE e.dep_id = t.id AND e.job_id = ANY($4::uuid[]) AND e.dep_state IS NULL`,

    /** `$1` job id → its node's `flow_id` and `role`. */
    nodeOf: `SELECT flow_id::text AS flow_id, role FROM ${nodes} WHERE job_id = $1::uuid`,

    /** `$1` job id → its edges: `id`, `state`, `result` (JSON text), `on_failure`, by id. */
    dependencies: `SELECT dep_id::text AS id, dep_state AS state, dep_result::text AS result,
        on_failure
      FROM ${deps} WHERE job_id = $1::uuid ORDER BY dep_id`,

    /**
     * `$1` flow id → per job of the flow: `id`, `name`, `state`, `pending`, `depends_on` (text[]),
     * by id. A job's state is read from the table it is in.
     */
    flowGet: `SELECT n.job_id::text AS id, n.role, COALESCE(j.name, f.name, d.name) AS name,
        CASE WHEN j.id IS NOT NULL THEN
               CASE WHEN j.status = 'queued' AND j.scheduled_at = '${PG_WAITING_AT}'::timestamptz
                    THEN 'waiting' ELSE j.status END
             WHEN f.id IS NOT NULL THEN f.status
             WHEN d.id IS NOT NULL THEN 'dead' ELSE 'gone' END AS state,
        n.pending,
        ARRAY(SELECT e.dep_id::text FROM ${deps} AS e WHERE e.job_id = n.job_id ORDER BY e.dep_id)
          AS depends_on
      FROM ${nodes} AS n
      LEFT JOIN ${jobs} AS j ON j.id = n.job_id
      LEFT JOIN LATERAL (SELECT x.id, x.name, x.status FROM ${finished} AS x
                         WHERE x.id = n.job_id LIMIT 1) AS f ON j.id IS NULL
      LEFT JOIN ${dead} AS d ON d.id = n.job_id AND j.id IS NULL
      WHERE n.flow_id = $1::uuid
      ORDER BY n.job_id`,

    /**
     * `$1` limit: takes (deletes) the oldest finishes of flows and batches (migration 022) and
     * adds them to the counters in the same statement → `seq`, `kind`, `id`, `outcome`,
     * `ended_at`, in order. Rows another taker holds are skipped.
     */
    endsTake: `WITH taken AS (
        DELETE FROM ${ends} WHERE seq IN (
          SELECT seq FROM ${ends} ORDER BY seq LIMIT $1::int FOR UPDATE SKIP LOCKED)
        RETURNING seq, kind, id, outcome, ended_at
      ), counted AS (
        INSERT INTO ${counts} AS c (kind, outcome, n)
        SELECT kind, outcome, count(*) FROM taken GROUP BY kind, outcome
        ON CONFLICT (kind, outcome) DO UPDATE SET n = c.n + EXCLUDED.n
        RETURNING 1
      )
      SELECT seq::text AS seq, kind, id::text AS id, outcome, ended_at FROM taken ORDER BY seq`,

    /**
     * `$1` after (uuid, NULL: from the start), `$2` limit: one step of the retention walk (see
     * `FlowStore.flowPrune`). Each node read names its group — its flow or batch (`flow_id`), or
     * itself — and a group is forgotten, nodes and its jobs' edges, when no node of it is an open
     * batch or a job still stored (live, finished and not forgotten, dead-lettered; looked up by
     * id). → `next` (the last node read, NULL past the end), `pruned` (nodes deleted).
     * A group's nodes are read one by one only until one keeps it (an `EXISTS` sub-plan, kept one
     * by `OFFSET 0`: as an anti-join the planner would test every node first): a batch of
     * 10,000 members still running is kept at its first live member, not after 10,000 lookups
     * in three tables (issue 29: the first tick of a worker's pruner ran inside the fan-in); only
     * a group to forget has all its nodes read.
     */
    prune: `WITH scan AS (
        SELECT job_id, COALESCE(flow_id, job_id) AS grp FROM ${nodes}
        WHERE $1::uuid IS NULL OR job_id > $1::uuid ORDER BY job_id LIMIT $2::int
      ), grps AS (
        SELECT DISTINCT grp FROM scan
      ), dropped AS (
        SELECT g.grp FROM grps AS g
        WHERE NOT EXISTS (SELECT 1 FROM ${nodes} AS n WHERE n.flow_id = g.grp
                            AND ${keeps} OFFSET 0)
          AND NOT EXISTS (SELECT 1 FROM ${nodes} AS n WHERE n.job_id = g.grp AND n.flow_id IS NULL
                            AND ${keeps} OFFSET 0)
      ), gone AS (
        SELECT n.job_id FROM dropped AS g JOIN ${nodes} AS n ON n.flow_id = g.grp
        UNION ALL
        SELECT n.job_id FROM dropped AS g JOIN ${nodes} AS n ON n.job_id = g.grp AND n.flow_id IS NULL
      ), edges AS (
        DELETE FROM ${deps} AS e USING gone AS g WHERE e.job_id = g.job_id RETURNING 1
      ), deleted AS (
        DELETE FROM ${nodes} AS n USING gone AS g WHERE n.job_id = g.job_id RETURNING 1
      )
      SELECT CASE WHEN (SELECT count(*) FROM scan) < $2::int THEN NULL
                  ELSE (SELECT job_id::text FROM scan ORDER BY job_id DESC LIMIT 1) END AS next,
        (SELECT count(*) FROM deleted)::int AS pruned,
        (SELECT count(*) FROM edges)::int AS edges`,

    /** → `kind`, `outcome`, `n` (bigint as text): the finishes taken so far. */
    endCounts: `SELECT kind, outcome, n::text AS n FROM ${counts} ORDER BY kind, outcome`,
  };
}

/** The statements {@link buildFlowStatements} returns. */
export type FlowStatements = ReturnType<typeof buildFlowStatements>;
