/**
 * The PostgreSQL lease store: `soniq_leases` through the named statements of sql.ts.
 */
import type { LeaseResignParams, LeaseStore, LeaseTryTakeParams } from "../contract/index.js";
import type { PgConnection } from "./connection.js";
import type { Statements } from "./sql.js";

/** {@link LeaseStore} on PostgreSQL. */
export class PgLeaseStore implements LeaseStore {
  /** @param conn The pool. @param sql The schema's statements. */
  constructor(
    private readonly conn: PgConnection,
    private readonly sql: Statements,
  ) {}

  /** One upsert that only takes a free or expired lease. See {@link LeaseStore.leaseTryTake}. */
  async leaseTryTake({ name, holder, ttlSeconds }: LeaseTryTakeParams): Promise<boolean> {
    const { rowCount } = await this.conn.run(this.sql.tryLead, [name, holder, ttlSeconds]);
    return rowCount > 0;
  }

  /** See {@link LeaseStore.leaseResign}. */
  async leaseResign({ name, holder }: LeaseResignParams): Promise<void> {
    await this.conn.run(this.sql.resign, [name, holder]);
  }
}
