/**
 * The SQLite statements of workflows (contract/flow-store.ts; migration 015), spread into the
 * catalogue (sql.ts). The release itself is the migration's triggers.
 */
import { NOW_MS } from "./clock.js";

/** The waiting instant (migration 015), as SQL. */
const WAITING = "253402300799999";

export const FLOW_SQL = {
  /**
   * `@id` → a row when another job waits for job `@id`, or it is a batch's member or a flow's
   * root (finishJob keeps it at retention 0, so the trigger on `soniq_finished_jobs` counts its
   * end: the release of its dependants, its batch's count-down, its flow's finish).
   */
  flowAwaited: `SELECT 1 AS awaited FROM soniq_job_deps WHERE dep_id = @id
    UNION ALL SELECT 1 FROM soniq_flow_nodes
    WHERE job_id = @id AND (role = 'member' OR (role = 'job' AND flow_id = job_id))
    LIMIT 1`,

  /**
   * `@ids` (a JSON array of job ids) → `queue` of each job that waited for one of them and is no
   * longer waiting (released by its end, just now, in the caller's transaction): the queues to
   * wake in this process. One statement per finishing write, one index probe per id.
   */
  flowReleasedQueues: `SELECT DISTINCT j.queue FROM json_each(@ids) AS f
    JOIN soniq_job_deps AS d ON d.dep_id = f.value
    JOIN soniq_jobs AS j ON j.id = d.job_id
    WHERE j.status = 'queued' AND j.scheduled_at <> ${WAITING}`,

  /**
   * The grouped ends of a completion (migration 019; transactions.ts `settleCompleted`): while
   * this row exists, the triggers on `soniq_finished_jobs` and the edges' count-down skip their
   * work. Inserted and deleted inside one transaction, never committed.
   */
  flowGroupingOn: "INSERT INTO soniq_flow_grouping (active) VALUES (1)",

  /** Deletes the row of {@link FLOW_SQL.flowGroupingOn}. */
  flowGroupingOff: "DELETE FROM soniq_flow_grouping",

  /**
   * `@ids` (a JSON array of job ids just moved to `soniq_finished_jobs`) → their flow nodes,
   * grouped: one row per role and flow with `n`, how many of `@ids` it holds, and `root` (1: the
   * node is its flow's root, whose `flow_id` is its own id). A batch's members ending in one
   * write make one row, not one each; a job without a node costs one probe of the nodes' key.
   */
  flowEndedNodes: `SELECT n.role, n.flow_id, n.flow_id = n.job_id AS root, count(*) AS n
    FROM json_each(@ids) AS e JOIN soniq_flow_nodes AS n ON n.job_id = e.value
    GROUP BY n.role, n.flow_id, root`,

  /**
   * `@counts` (a JSON object: batch id → its members that just ended `done`): one `UPDATE` per
   * batch (migration 016's soniq_batch_finished fires on it as for one member).
   */
  flowBatchesCountDown: `UPDATE soniq_flow_nodes SET members_left = members_left - c.value
    FROM json_each(@counts) AS c
    WHERE soniq_flow_nodes.job_id = c.key AND soniq_flow_nodes.role = 'batch'`,

  /** `@ids` (a JSON array of flow roots that just ended `done`): their flows' ends, in order. */
  flowRootsDone: `INSERT INTO soniq_flow_ends (kind, id, outcome, ended_at)
    SELECT 'flow', e.value, 'done', ${NOW_MS} FROM json_each(@ids) AS e ORDER BY e.key`,

  /**
   * `@ids` (jobs just finished `done`): their open edges end `done` with each job's stored result,
   * in one statement (one probe of the edges' `dep_id` index per id; the result is read only for
   * an edge that ends). → `job_id` per edge ended (the caller counts each dependant down once).
   */
  flowEdgesDone: `UPDATE soniq_job_deps SET dep_state = 'done',
      dep_result = (SELECT f.result FROM soniq_finished_jobs AS f WHERE f.id = soniq_job_deps.dep_id)
    FROM json_each(@ids) AS e
    WHERE soniq_job_deps.dep_id = e.value AND soniq_job_deps.dep_state IS NULL
    RETURNING soniq_job_deps.job_id AS job_id`,

  /**
   * `@counts` (a JSON object: dependant's id → edges that ended well): one `UPDATE` of each
   * dependant's `pending` (migration 018's soniq_flow_release releases it at 0).
   */
  flowDependantsCountDown: `UPDATE soniq_flow_nodes SET pending = pending - c.value
    FROM json_each(@counts) AS c WHERE soniq_flow_nodes.job_id = c.key`,

  /**
   * `@counts` (the object of {@link FLOW_SQL.flowDependantsCountDown}) → `queue` of each of its
   * dependants that is no longer waiting (released by that count-down, just now): the queues to
   * wake in this process. One probe per dependant.
   */
  flowReleasedDependants: `SELECT DISTINCT j.queue FROM json_each(@counts) AS c
    JOIN soniq_jobs AS j ON j.id = c.key
    WHERE j.status = 'queued' AND j.scheduled_at <> ${WAITING}`,

  /** `@id` → a row when job `@id` is live. */
  flowLive: "SELECT 1 AS live FROM soniq_jobs WHERE id = @id",

  /** `@id` → `state` (done, cancelled, dead) and `result` of an ended, still stored job. */
  flowEnded: `SELECT status AS state, result FROM soniq_finished_jobs WHERE id = @id
    UNION ALL SELECT 'dead', NULL FROM soniq_dead_letter_jobs WHERE id = @id`,

  /** `@id`: the job just inserted (not due) becomes waiting. */
  flowMarkWaiting: `UPDATE soniq_jobs SET scheduled_at = ${WAITING}
    WHERE id = @id AND status = 'queued'`,

  /**
   * `@id`, `@flowId`, `@runAt` (ms; NULL for a job without edges), `@pending`, `@retentionMs`,
   * `@role`, `@membersLeft` (a batch's members not ended, migration 016; else 0): one node (a
   * job's, or a batch's own).
   */
  flowInsertNode: `INSERT INTO soniq_flow_nodes (job_id, flow_id, run_at, pending, retention_ms,
      role, created_at, members_left)
    VALUES (@id, @flowId, @runAt, @pending, @retentionMs, @role, ${NOW_MS}, @membersLeft)`,

  /** `@batchId`, `@n`: `@n` members added, counted as not ended on the batch's node. */
  batchGrow: `UPDATE soniq_flow_nodes SET members_left = members_left + @n
    WHERE job_id = @batchId AND role = 'batch'`,

  /** `@limit` → the oldest finishes of flows and batches: `seq`, `kind`, `id`, `outcome`, `ended_at` (ms). */
  flowEndsOldest: `SELECT seq, kind, id, outcome, ended_at FROM soniq_flow_ends
    ORDER BY seq LIMIT @limit`,

  /** `@upTo`: deletes the finishes taken (seq ≤ `@upTo`). */
  flowEndsDelete: "DELETE FROM soniq_flow_ends WHERE seq <= @upTo",

  /** `@kind`, `@outcome`, `@n`: adds `@n` finishes to the counter. */
  flowEndsCount: `INSERT INTO soniq_flow_counts (kind, outcome, n) VALUES (@kind, @outcome, @n)
    ON CONFLICT (kind, outcome) DO UPDATE SET n = n + excluded.n`,

  /**
   * `@after` (NULL: from the start), `@limit` → the next groups of the retention walk, read by
   * their heads (migration 023: the node whose id is the group's): `job_id`, `grp` (the same).
   */
  flowPruneScan: `SELECT job_id, job_id AS grp FROM soniq_flow_nodes INDEXED BY soniq_flow_nodes_heads
    WHERE (flow_id IS NULL OR flow_id = job_id) AND (@after IS NULL OR job_id > @after)
    ORDER BY job_id LIMIT @limit`,

  /**
   * `@grp` → a row when group `@grp` is kept: one of its nodes is an open batch or a job still
   * stored (live, finished, dead-lettered; looked up by id).
   */
  flowPruneKept: `SELECT 1 AS kept FROM (
      SELECT job_id, role, pending FROM soniq_flow_nodes WHERE flow_id = @grp
      UNION ALL
      SELECT job_id, role, pending FROM soniq_flow_nodes WHERE job_id = @grp AND flow_id IS NULL
    ) AS m
    WHERE (m.role = 'batch' AND m.pending > 0)
       OR (m.role <> 'batch' AND (
            EXISTS (SELECT 1 FROM soniq_jobs AS j WHERE j.id = m.job_id)
            OR EXISTS (SELECT 1 FROM soniq_finished_jobs AS f WHERE f.id = m.job_id)
            OR EXISTS (SELECT 1 FROM soniq_dead_letter_jobs AS d WHERE d.id = m.job_id)))
    LIMIT 1`,

  /** `@grp`: deletes the edges of group `@grp`'s jobs. */
  flowPruneEdges: `DELETE FROM soniq_job_deps WHERE job_id IN (
      SELECT job_id FROM soniq_flow_nodes WHERE flow_id = @grp
      UNION ALL
      SELECT job_id FROM soniq_flow_nodes WHERE job_id = @grp AND flow_id IS NULL)`,

  /** `@grp`: deletes group `@grp`'s nodes. → changes. */
  flowPruneNodes: `DELETE FROM soniq_flow_nodes
    WHERE flow_id = @grp OR (job_id = @grp AND flow_id IS NULL)`,

  /** → `kind`, `outcome`, `n`: the finishes taken so far. */
  flowEndCounts: "SELECT kind, outcome, n FROM soniq_flow_counts ORDER BY kind, outcome",

  /** `@batchId` → `pending` (1 open, 0 sealed) of the batch's node; none when no such batch. */
  batchState: `SELECT pending FROM soniq_flow_nodes WHERE job_id = @batchId AND role = 'batch'`,

  /**
   * `@batchId` → its callbacks still waiting for the seal: `job_id`, `role` (which gives the
   * policy of their edges to a member added now: shared/flow-graph.ts `memberEdgePolicy`).
   */
  batchCallbacks: `SELECT d.job_id, n.role FROM soniq_job_deps AS d
    JOIN soniq_flow_nodes AS n ON n.job_id = d.job_id
    WHERE d.dep_id = @batchId AND d.dep_state IS NULL`,

  /** `@id`, `@n`: callback `@id` waits for `@n` more members. */
  batchBump: "UPDATE soniq_flow_nodes SET pending = pending + @n WHERE job_id = @id",

  /**
   * `@batchId`: marks the batch sealed when it has a member. → changes (0: sealed already, no
   * member yet, or no such batch).
   */
  batchSealNode: `UPDATE soniq_flow_nodes SET pending = 0
    WHERE job_id = @batchId AND role = 'batch' AND pending > 0
      AND EXISTS (SELECT 1 FROM soniq_flow_nodes WHERE flow_id = @batchId AND role = 'member')`,

  /** `@batchId`: meets the seal edges (the edge triggers release or cancel each callback). */
  batchSealEdges: `UPDATE soniq_job_deps SET dep_state = 'done'
    WHERE dep_id = @batchId AND dep_state IS NULL`,

  /** `@jobId`, `@depId`, `@onFailure`: one edge. */
  flowInsertEdge: `INSERT INTO soniq_job_deps (job_id, dep_id, on_failure)
    VALUES (@jobId, @depId, @onFailure)`,

  /**
   * `@jobId`, `@depId`, `@state`, `@result`: records an end that happened before the enqueue;
   * the edge triggers settle the dependant as for a later end.
   */
  flowSettleEnded: `UPDATE soniq_job_deps SET dep_state = @state, dep_result = @result
    WHERE job_id = @jobId AND dep_id = @depId AND dep_state IS NULL`,

  /**
   * `@id`: a live job deleted by an operator ends the edges of the jobs waiting for it as
   * `cancelled` (the edge triggers apply each dependant's failure policy).
   */
  flowEndDeleted: `UPDATE soniq_job_deps SET dep_state = 'cancelled'
    WHERE dep_id = @id AND dep_state IS NULL`,

  /**
   * `@id`: a live batch member deleted by an operator ends `cancelled` for its batch, as a cancel
   * would (migration 016's count-down; the batch's trigger records its finish when it was the last).
   */
  batchMemberDeleted: `UPDATE soniq_flow_nodes SET members_left = members_left - 1,
      members_failed = members_failed + 1
    WHERE role = 'batch'
      AND job_id = (SELECT flow_id FROM soniq_flow_nodes WHERE job_id = @id AND role = 'member')`,

  /**
   * `@id`, `@failed` (1 when it had ended cancelled): a finished batch member run again (run
   * now) is pending again in its batch, and no longer failed: its next end counts once.
   */
  batchMemberRearm: `UPDATE soniq_flow_nodes SET members_left = members_left + 1,
      members_failed = max(members_failed - @failed, 0)
    WHERE role = 'batch'
      AND job_id = (SELECT flow_id FROM soniq_flow_nodes WHERE job_id = @id AND role = 'member')`,

  /** `@id`: a live flow root deleted by an operator finishes its flow `cancelled`. */
  flowRootDeleted: `INSERT INTO soniq_flow_ends (kind, id, outcome, ended_at)
    SELECT 'flow', job_id, 'cancelled', ${NOW_MS} FROM soniq_flow_nodes
    WHERE job_id = @id AND flow_id = job_id AND role = 'job'`,
  /** `@jobId` → its node's `flow_id` and `role`. */
  flowNodeOf: "SELECT flow_id, role FROM soniq_flow_nodes WHERE job_id = @jobId",

  /** `@jobId` → its edges: `id`, `state`, `result`, `on_failure`, by id. */
  flowDependencies: `SELECT dep_id AS id, dep_state AS state, dep_result AS result, on_failure
    FROM soniq_job_deps WHERE job_id = @jobId ORDER BY dep_id`,

  /**
   * `@flowId` → per job of the flow: `id`, `name`, `state`, `pending`, `depends_on` (a JSON
   * array), by id.
   */
  flowGet: `SELECT n.job_id AS id, n.role, COALESCE(j.name, f.name, d.name) AS name,
      CASE WHEN j.id IS NOT NULL THEN
             CASE WHEN j.status = 'queued' AND j.scheduled_at = ${WAITING} THEN 'waiting'
                  ELSE j.status END
           WHEN f.id IS NOT NULL THEN f.status
           WHEN d.id IS NOT NULL THEN 'dead' ELSE 'gone' END AS state,
      n.pending,
      (SELECT json_group_array(dep_id) FROM (SELECT e.dep_id FROM soniq_job_deps AS e
        WHERE e.job_id = n.job_id ORDER BY e.dep_id)) AS depends_on
    FROM soniq_flow_nodes AS n
    LEFT JOIN soniq_jobs AS j ON j.id = n.job_id
    LEFT JOIN soniq_finished_jobs AS f ON f.id = n.job_id
    LEFT JOIN soniq_dead_letter_jobs AS d ON d.id = n.job_id
    WHERE n.flow_id = @flowId
    ORDER BY n.job_id`,
} as const;
