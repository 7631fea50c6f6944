/**
 * Hand-off at enqueue on PostgreSQL (contract/hand-off.ts): a pool enqueue of one job due now,
 * with a worker of this process idle on its queue, runs `enqueueHandOff` (hand-off-sql.ts) — one
 * round trip, one commit — and gives the worker the row the database inserted as claimed by it.
 * Everything else (a transactional enqueue, a batch, a delayed job, no idle worker, a dedup holder
 * that this statement's snapshot cannot see) takes the ordinary path of enqueue.ts.
 */
import { isSoniqError } from "../../errors.js";
import { claimedJobOfRow } from "../claimed-job.js";
import type { EnqueueResult, HandOffReservation, NewJob } from "../contract/index.js";
import type { PgJobStoreDeps } from "./connection.js";
import type { RawClaimedRow } from "./rows.js";

/** What the PostgreSQL enqueue needs for hand-offs: the desk and the statement. */
export type PgHandOff = NonNullable<PgJobStoreDeps["handOff"]>;

/** A `bool` column read through the pool's default parsers (or text, to be safe). */
function truthy(value: unknown): boolean {
  return value === true || value === "t" || value === "true";
}

/**
 * Whether a failed statement's error proves that nothing was committed: the server answered with
 * an error (an SQLSTATE outside connection exceptions, class 08, and operator intervention, class
 * 57 — a cancel or a shutdown may come after the commit), or the backend refused before sending.
 * Anything else (a dropped connection, a client-side timeout) may have lost a committed reply.
 */
function certainlyNotCommitted(err: unknown): boolean {
  if (isSoniqError(err, "CLOSED") || isSoniqError(err, "SCHEMA_NOT_READY")) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return (
    typeof code === "string" &&
    /^[0-9A-Z]{5}$/.test(code) &&
    !code.startsWith("08") &&
    !code.startsWith("57")
  );
}

/**
 * Enqueues `job` for the worker holding `reservation` (`LocalHandOffDesk.reserveFor`).
 * @returns The enqueue's result — the worker already has the job when it was handed off; the
 * worker's queue is woken when it was queued instead — or `undefined` when a dedup holder is not
 * yet visible to this statement's snapshot: the caller then enqueues as usual. The reservation is
 * always settled before return.
 * @throws Driver errors, as the ordinary enqueue (the reservation is settled as lost, or cancelled
 * when the server's answer proves nothing was committed).
 */
export async function enqueueHandedOff(
  deps: PgJobStoreDeps,
  handOff: PgHandOff,
  job: NewJob,
  reservation: HandOffReservation,
): Promise<EnqueueResult | undefined> {
  let row:
    | (RawClaimedRow & { inserted: unknown; handed: unknown; holder_id: string | null })
    | undefined;
  try {
    const result = await deps.conn.run<NonNullable<typeof row>>(handOff.sql.enqueueHandOff, [
      job.id,
      job.name,
      job.queue,
      job.args,
      job.priority,
      job.maxAttempts,
      job.dedupKey,
      job.meta ?? null,
      job.traceContext ?? null,
      reservation.workerId,
      job.version ?? 1,
    ]);
    row = result.rows[0];
  } catch (err) {
    settleFailed(reservation, err);
    throw err;
  }
  if (!row) {
    reservation.cancel();
    throw new Error("the hand-off enqueue returned no row");
  }
  if (!truthy(row.inserted)) {
    // A dedup hit: nothing inserted, nothing claimed; the holder's id, as the ordinary path.
    reservation.cancel();
    return row.holder_id === null ? undefined : { id: row.holder_id, inserted: false };
  }
  if (truthy(row.handed)) {
    reservation.deliver(claimedJobOfRow(row));
  } else {
    // Queued behind a due backlog (or a paused or limited queue): wake the workers as usual.
    reservation.cancel();
    deps.wake(job.queue);
  }
  return { id: job.id, inserted: true };
}

/** Settles the reservation of a statement that failed (see {@link certainlyNotCommitted}). */
function settleFailed(reservation: HandOffReservation, err: unknown): void {
  if (certainlyNotCommitted(err)) reservation.cancel();
  else reservation.lost(err);
}
