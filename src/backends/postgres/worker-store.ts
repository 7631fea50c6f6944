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
import { schemaBehindError } from "../shared/schema-behind.js";
import { exitCounts } from "../shared/worker-exits.js";
import type { PgConnection } from "./connection.js";
import { type RawWorkerRow, toWorkerRow } from "./rows.js";
import type { Statements } from "./sql.js";

/**
 * The schema version this build was made for (its newest migration): a worker registers with it;
 * a schema that needs a newer one refuses the registration (migration 010's trigger), and so does
 * one whose newest applied migration is older (the registration's own check).
 */
const SCHEMA_VERSION = loadMigrations("postgres").at(-1)?.version ?? 0;

/** {@link WorkerStore} on PostgreSQL; liveness is computed by the database clock. */
export class PgWorkerStore implements WorkerStore {
  /**
   * @param conn The pool. @param sql The schema's statements.
   * @param schema The schema (validated), named in the refusal of a worker newer than it.
   */
  constructor(
    private readonly conn: PgConnection,
    private readonly sql: Statements,
    private readonly schema: string,
  ) {}

  /**
   * See {@link WorkerStore.workerRegister}. One statement reads the schema's newest applied
   * migration and writes the row only when it is not older than this build's.
   * @throws SoniqError `SCHEMA_NOT_READY` (nothing written) when the schema is behind this build
   * (`soniq setup` not run since the upgrade) or has no tables; the trigger's refusal (SQLSTATE
   * `SQ001`) for a build older than the schema.
   */
  async workerRegister(worker: WorkerRegisterParams): Promise<void> {
    const { rows } = await this.conn.run<{ schema_version: number; registered: number }>(
      this.sql.registerWorker,
      [
        worker.id,
        worker.hostname,
        worker.pid,
        worker.queues === null ? null : [...worker.queues],
        worker.concurrency,
        SCHEMA_VERSION,
        worker.jobVersions ? JSON.stringify(worker.jobVersions) : null,
      ],
    );
    const applied = rows[0]?.schema_version ?? 0;
    if (rows[0]?.registered !== 1) {
      throw schemaBehindError(JSON.stringify(this.schema), applied, SCHEMA_VERSION);
    }
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
