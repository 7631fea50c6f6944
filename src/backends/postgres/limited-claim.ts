/**
 * Claims from queues with a `max_running` (contract: admin-store.ts `QueueSetParams`), so the
 * limit holds across every worker process: per queue, one transaction locks the queue's row in
 * `soniq_queues` (`FOR UPDATE`: limited claims of one queue take turns), counts its processing
 * rows — with a fresh snapshot taken after the lock, so it sees every claim committed before — and
 * claims at most its room (shared/claim-policy.ts). The ordinary claim statements skip these
 * queues. Which queues are limited is re-read at most once a second; a stale answer only delays a
 * limited queue's first claim, never exceeds a limit (the ordinary claim reads `soniq_queues` in
 * the statement itself). Keyed jobs of a limited queue are claimed here too, after its other
 * jobs and within its room, under the queue row's lock and then the keyed-claim lock (the only
 * order both are ever taken in).
 */
import { limitedRoom } from "../shared/claim-policy.js";
import type { PgConnection } from "./connection.js";
import type { KeyedClaim } from "./keyed-claim.js";
import type { RawClaimedRow } from "./rows.js";
import type { Statements } from "./sql.js";

/** How long the list of limited queues is reused, in milliseconds. */
const LIMITED_QUEUES_TTL_MS = 1000;

/** The claim of the limited queues, after the ordinary claim statement (job-store.ts). */
export class LimitedClaim {
  private names: string[] = [];
  private readAt = Number.NEGATIVE_INFINITY;

  /** @param conn The pool. @param sql The schema's statements. */
  constructor(
    private readonly conn: PgConnection,
    private readonly sql: Statements,
    private readonly keyed: KeyedClaim,
  ) {}

  /**
   * Claims up to `limit` jobs from the limited queues among `queues` (null: every queue), one
   * transaction per queue, in name order, until the limit is reached.
   * @returns The claimed rows, as `claimLimited` (sql.ts) returns them.
   */
  async claim(request: {
    workerId: string;
    limit: number;
    queues: readonly string[] | null;
    /** Stored in `start_known` (see `JobClaimParams.deferStart`). */
    startKnown: boolean;
    /** Only jobs of these names (see `JobClaimParams.names`); null: any name. */
    names: readonly string[] | null;
    /** Their highest versions, in the same order (see `JobClaimParams.versions`); null: any. */
    versions: readonly number[] | null;
  }): Promise<RawClaimedRow[]> {
    const { sql } = this;
    const out: RawClaimedRow[] = [];
    for (const queue of await this.limitedAmong(request.queues)) {
      const wanted = request.limit - out.length;
      if (wanted <= 0) break;
      const claimed = await this.conn.transaction(async (client) => {
        const lock = await client.query<{ max_running: number }>(sql.lockLimitedQueue, [queue]);
        const maxRunning = lock.rows[0]?.max_running;
        if (maxRunning === undefined) return [];
        const counted = await client.query<{ n: string }>(sql.countProcessing, [queue]);
        const processing = Number(counted.rows[0]?.n ?? 0);
        const room = limitedRoom({ maxRunning, processing, wanted });
        if (room === 0) return [];
        const values = [
          request.workerId,
          room,
          queue,
          request.startKnown,
          request.names,
          request.versions,
        ];
        const rows = (await client.query<RawClaimedRow>(sql.claimLimited, values)).rows;
        if (rows.length >= room || !this.keyed.mayHaveQueued()) return rows;
        // Keyed jobs of this queue, within the room left, under both locks (keyed-claim.ts).
        const keyed = await this.keyed.claimIn(
          client,
          { ...request, limit: room - rows.length, queues: [queue] },
          false,
        );
        return [...rows, ...keyed];
      });
      out.push(...claimed);
    }
    return out;
  }

  /** The limited queues among `queues` (null: every queue), in name order; cached for a second. */
  private async limitedAmong(queues: readonly string[] | null): Promise<string[]> {
    if (Date.now() - this.readAt > LIMITED_QUEUES_TTL_MS) {
      const { rows } = await this.conn.run<{ name: string }>(this.sql.limitedQueues, []);
      this.names = rows.map((r) => r.name);
      this.readAt = Date.now();
    }
    return queues === null ? this.names : this.names.filter((name) => queues.includes(name));
  }
}
