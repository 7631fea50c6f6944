/**
 * The PostgreSQL worker store: `soniq_workers` through the named statements of sql.ts.
 */
import type {
  WorkerExitCount,
  WorkerForgetParams,
  WorkerHeartbeatParams,
  WorkerListParams,
  WorkerListRow,
  WorkerMarkStoppedParams,
  WorkerRegisterParams,
  WorkerStore,
} from "../contract/index.js";
import { loadMigrations } from "../shared/migrations.js";
import { exitCounts } from "../shared/worker-exits.js";
import type { PgConnection } from "./connection.js";
import { type RawWorkerRow, toWorkerRow } from "./rows.js";
import type { Statements } from "./sql.js";

/**
 * The schema version this build was made for (its newest migration): a worker registers with it,
 * and a schema that needs a newer one refuses the registration (migration 010's trigger).
 */
const SCHEMA_VERSION = loadMigrations("postgres").at(-1)?.version ?? 0;

/** {@link WorkerStore} on PostgreSQL; liveness is computed by the database clock. */
export class PgWorkerStore implements WorkerStore {
  /** @param conn The pool. @param sql The schema's statements. */
  constructor(
    private readonly conn: PgConnection,
    private readonly sql: Statements,
  ) {}

  /** See {@link WorkerStore.workerRegister}. */
  async workerRegister(worker: WorkerRegisterParams): Promise<void> {
    await this.conn.run(this.sql.registerWorker, [
      worker.id,
      worker.hostname,
      worker.pid,
      worker.queues === null ? null : [...worker.queues],
      worker.concurrency,
      SCHEMA_VERSION,
      worker.jobVersions ? JSON.stringify(worker.jobVersions) : null,
    ]);
  }

  /** See {@link WorkerStore.workerHeartbeat}. */
  async workerHeartbeat({ workerId, status }: WorkerHeartbeatParams): Promise<void> {
    await this.conn.run(this.sql.heartbeat, [workerId, status]);
  }

  /** See {@link WorkerStore.workerMarkStopped}. */
  async workerMarkStopped({ workerId, exitReason }: WorkerMarkStoppedParams): Promise<void> {
    if (exitReason === undefined) await this.conn.run(this.sql.markWorkerStopped, [workerId]);
    else await this.conn.run(this.sql.markWorkerStoppedCounted, [workerId, exitReason]);
  }

  /** See {@link WorkerStore.workerExitCounts}. */
  async workerExitCounts(): Promise<WorkerExitCount[]> {
    const { rows } = await this.conn.run<{ exit_reason: string; exits: number; last_at: Date }>(
      this.sql.workerExitCounts,
      [],
    );
    return exitCounts(
      rows.map((r) => ({ reason: r.exit_reason, exits: r.exits, lastAt: r.last_at })),
    );
  }

  /** See {@link WorkerStore.workerList}. */
  async workerList({ heartbeatTimeoutSeconds }: WorkerListParams): Promise<WorkerListRow[]> {
    const { rows } = await this.conn.run<RawWorkerRow & { live: boolean }>(this.sql.listWorkers, [
      heartbeatTimeoutSeconds,
    ]);
    return rows.map((row) => ({ ...toWorkerRow(row), live: row.live }));
  }

  /** See {@link WorkerStore.workerForget}. */
  async workerForget({ notSeenForSeconds, limit }: WorkerForgetParams): Promise<number> {
    const { rowCount } = await this.conn.run(this.sql.forgetWorkers, [
      notSeenForSeconds,
      limit ?? null,
    ]);
    return rowCount;
  }
}
