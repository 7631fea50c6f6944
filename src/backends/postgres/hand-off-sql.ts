/**
 * The PostgreSQL statement of hand-off at enqueue (contract/hand-off.ts), built once per schema:
 * one job inserted either already claimed by a worker of this process or queued as usual, the
 * choice made by the database in the same statement.
 */

import { pgKeyedInMeta, pgUnkeyed } from "../shared/concurrency-meta.js";
import { pgQueuePaused } from "../shared/queue-pause.js";
import { takeKeys } from "./finish-sql.js";
import { quoteIdent } from "./identifiers.js";
import { CLAIMED_COLUMNS } from "./rows.js";

/** The statements of {@link buildHandOffStatements}. */
export type HandOffStatements = ReturnType<typeof buildHandOffStatements>;

/** Builds the hand-off statement for `schema` (already validated). */
export function buildHandOffStatements(schema: string) {
  const s = quoteIdent(schema);
  const jobs = `${s}.${quoteIdent("soniq_jobs")}`;
  const queues = `${s}.${quoteIdent("soniq_queues")}`;
  const dedup = `${s}.${quoteIdent("soniq_dedup_keys")}`;
  return {
    /**
     * One job due now, inserted as claimed by worker `$10` when its queue is free — no due
     * `queued` row of that queue is visible to this statement (so the job never overtakes a due
     * job it can see; the probe asks for the queue's first due row in the order of
     * `soniq_jobs_queue_claim_idx`, `queue` leading, so only that index serves it without a sort
     * and it is walked from the queue's first row whatever the statistics. The queue is matched
     * as the range `>= $3 AND <= $3` (the same rows: the column's collation is deterministic)
     * because with `= $3` the planner drops `queue` from the order as a constant and may walk
     * `soniq_jobs_claim_idx` across other queues' backlog instead — it does when `queue` and
     * `status` are estimated as independent — and an `EXISTS` drops the order altogether; that
     * index holds the rows without a key, migration 027, so the keyed ones are asked of
     * `soniq_jobs_keyed_queue_idx`, keyed rows only, one probe, empty without keys; its
     * `meta IS NOT NULL` half is for the planner, as in `pgUnkeyed`: without it, `meta`'s
     * statistics unused, it estimated every row keyed and scanned the table) and
     * the queue is neither paused nor
     * limited (`max_running`: those are claimed under
     * their queue row's lock) — else queued exactly as `enqueue` does. A claimed row gets what a
     * worker's claim writes (`processing`, owner, fresh `claim_token`, `started_at` now, start not
     * known); a queued row keeps the defaults. Dedup: a held key inserts nothing (`takeKeys`).
     *
     * `$1` id, `$2` name, `$3` queue, `$4` args (JSON text), `$5` priority, `$6` max attempts,
     * `$7` dedup key (NULL = none), `$8` meta (JSON text or NULL), `$9` trace context (or NULL),
     * `$10` worker id, `$11` version. → one row: `inserted`, `handed` (inserted as claimed), `holder_id` (the
     * holder of the dedup key when not inserted; NULL when it is not visible to this snapshot),
     * and the claimed columns (`CLAIMED_COLUMNS`, NULL when not inserted).
     *
     * The insert trigger NOTIFYs only rows inserted `queued` (migration 009), so a handed-off row
     * wakes nobody.
     */
    enqueueHandOff: `WITH gate AS MATERIALIZED (
        SELECT (SELECT b.id FROM ${jobs} AS b
                WHERE b.status = 'queued' AND b.queue >= $3::text AND b.queue <= $3::text
                  AND b.scheduled_at <= now() AND ${pgUnkeyed("b")}
                ORDER BY b.queue, b.priority, b.scheduled_at, b.created_at, b.id
                LIMIT 1) IS NULL
           AND NOT EXISTS (SELECT 1 FROM ${jobs} AS k
                           WHERE k.status = 'queued' AND ${pgKeyedInMeta("k")}
                             AND k.queue = $3::text
                             AND k.scheduled_at <= now())
           AND NOT EXISTS (SELECT 1 FROM ${queues} AS q
                           WHERE q.name = $3::text AND (${pgQueuePaused("q")} OR q.max_running IS NOT NULL))
             AS free
      ), input AS (SELECT $1::uuid AS id, $7::text AS dedup_key)${takeKeys(dedup, "input")},
      inserted AS (
        INSERT INTO ${jobs} (id, name, queue, args, priority, max_attempts, scheduled_at,
                             dedup_key, meta, trace_context, status, worker_id, claim_token,
                             started_at, start_known, version)
        SELECT $1::uuid, $2::text, $3::text, $4::text::json, $5::int, $6::int, now(), $7::text,
               $8::text::json, $9::text,
               CASE WHEN gate.free THEN 'processing' ELSE 'queued' END,
               CASE WHEN gate.free THEN $10::text END,
               CASE WHEN gate.free THEN gen_random_uuid() END,
               CASE WHEN gate.free THEN now() END,
               NOT gate.free, $11::int
        FROM gate
        WHERE $7::text IS NULL OR EXISTS (SELECT 1 FROM taken)
        RETURNING *
      )
      SELECT i.id IS NOT NULL AS inserted, i.status IS NOT DISTINCT FROM 'processing' AS handed,
             CASE WHEN i.id IS NULL
                  THEN (SELECT h.job_id::text FROM ${dedup} AS h WHERE h.dedup_key = $7::text
                          AND (h.held_until IS NULL OR h.held_until > now()))
             END AS holder_id,
             ${CLAIMED_COLUMNS}
      FROM (SELECT 1) AS one LEFT JOIN inserted AS i ON true`,
  };
}
