/**
 * Claims from queues with a `max_running` (contract: admin-store.ts `QueueSetParams`), so the
 * limit holds across every worker process: per queue, one transaction locks the queue's row in
 * `soniq_queues` (`FOR UPDATE`: limited claims of one queue take turns), counts its processing
 * rows — with a fresh snapshot taken after the lock, so it sees every claim committed before — and
 * claims at most the room left. The ordinary claim statements skip these queues. Which queues are
 * limited is re-read at most once a second ({@link LimitedQueues}); a stale answer only delays a
 * limited queue's first claim, never exceeds a limit (the ordinary claim reads `soniq_queues` in
 * the statement itself).
 */
import type pg from "pg";
import { checkOut } from "./checkout.js";
import type { RawClaimedRow } from "./rows.js";
import type { AdminStatements } from "./sql.js";

/** How long the list of limited queues is reused, in milliseconds. */
const LIMITED_QUEUES_TTL_MS = 1000;

/** A cached read of the queues that have a `max_running` and are not paused. */
export class LimitedQueues {
  private names: string[] = [];
  private readAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly read: () => Promise<{ rows: Array<{ name: string; max_running: number }> }>,
  ) {}

  /** The limited queues among `queues` (null: every queue). */
  async get(queues: readonly string[] | null): Promise<string[]> {
    if (Date.now() - this.readAt > LIMITED_QUEUES_TTL_MS) {
      const { rows } = await this.read();
      this.names = rows.map((r) => r.name);
      this.readAt = Date.now();
    }
    return queues === null ? this.names : this.names.filter((name) => queues.includes(name));
  }
}

/**
 * Claims up to `limit` jobs from `queues` (each limited), one transaction per queue, in order,
 * until the limit is reached. Each claim statement is `claimLimited` (sql.ts).
 * @returns The claimed rows, as the claim statement returns them.
 */
export async function claimLimitedQueues(
  pool: pg.Pool,
  claimSql: string,
  sql: AdminStatements,
  request: { workerId: string; limit: number; queues: readonly string[]; startKnown: boolean },
): Promise<RawClaimedRow[]> {
  const out: RawClaimedRow[] = [];
  for (const queue of request.queues) {
    const want = request.limit - out.length;
    if (want <= 0) break;
    const { client, release } = await checkOut(pool);
    try {
      await client.query("BEGIN");
      const lock = await client.query<{ max_running: number }>(sql.lockLimitedQueue, [queue]);
      const max = lock.rows[0]?.max_running;
      if (max !== undefined) {
        const counted = await client.query<{ n: string }>(sql.countProcessing, [queue]);
        const room = Math.min(want, max - Number(counted.rows[0]?.n ?? 0));
        if (room > 0) {
          const claimed = await client.query<RawClaimedRow>(claimSql, [
            request.workerId,
            room,
            queue,
            request.startKnown,
          ]);
          out.push(...claimed.rows);
        }
      }
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      release(err instanceof Error);
      throw err;
    }
    release();
  }
  return out;
}
