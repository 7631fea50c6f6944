/**
 * The SQLite lease store: `soniq_leases` through the named statements of sql.ts (one upsert that
 * only takes a free or expired lease; expiry on SQLite's clock).
 */
import type { LeaseResignParams, LeaseStore, LeaseTryTakeParams } from "../contract/index.js";
import { secondsToMs } from "./clock.js";
import type { SqliteConnection } from "./connection.js";

/** {@link LeaseStore} on SQLite. */
export class SqliteLeaseStore implements LeaseStore {
  /** @param conn The backend's connection. */
  constructor(private readonly conn: SqliteConnection) {}

  /** See {@link LeaseStore.leaseTryTake}. */
  async leaseTryTake({ name, holder, ttlSeconds }: LeaseTryTakeParams): Promise<boolean> {
    const ttlMs = secondsToMs(ttlSeconds);
    return this.conn.use((s) => s.statement("tryLead").get({ name, holder, ttlMs }) !== undefined);
  }

  /** See {@link LeaseStore.leaseResign}. */
  async leaseResign({ name, holder }: LeaseResignParams): Promise<void> {
    await this.conn.use((s) => {
      s.statement("resign").run({ name, holder });
    });
  }
}
