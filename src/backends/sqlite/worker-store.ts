/**
 * The SQLite worker store: `soniq_workers` through the named statements of sql.ts. Times come
 * from SQLite's clock in milliseconds; durations passed in are seconds.
 */

import { resolve } from "node:path";
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
import { secondsToMs } from "./clock.js";
import type { SqliteConnection } from "./connection.js";
import { toWorkerRow, type WorkerRecord } from "./rows.js";

/**
 * The schema version this build was made for: the newest SQLite migration it has. A worker
 * records it at registration; the schema refuses one older than itself (migration 008's trigger),
 * and the registration refuses a schema older than it.
 */
function schemaVersion(): number {
  const newest = loadMigrations("sqlite").at(-1);
  if (newest === undefined) throw new Error("this build has no SQLite migrations");
  return newest.version;
}

/** {@link WorkerStore} on SQLite. */
export class SqliteWorkerStore implements WorkerStore {
  /** @param conn The backend's connection. */
  constructor(private readonly conn: SqliteConnection) {}

  /**
   * See {@link WorkerStore.workerRegister}. Reads the file's newest applied migration, then writes
   * the row only when it is not older than this build's (one call on the connection).
   * @throws SoniqError `SCHEMA_NOT_READY` (nothing written) when the file is behind this build
   * (`soniq setup` not run since the upgrade), has no tables or does not exist; the trigger's
   * refusal for a build older than the file.
   */
  async workerRegister(worker: WorkerRegisterParams): Promise<void> {
    const needs = schemaVersion();
    await this.conn.use((s) => {
      const { version } = s.statement("newestMigration").get() as { version: number };
      if (version < needs) {
        throw schemaBehindError(`in ${resolve(this.conn.path)}`, version, needs);
      }
      s.statement("registerWorker").run({
        id: worker.id,
        hostname: worker.hostname,
        pid: worker.pid,
        queues: worker.queues === null ? null : JSON.stringify(worker.queues),
        concurrency: worker.concurrency,
        schemaVersion: needs,
        jobVersions: worker.jobVersions ? JSON.stringify(worker.jobVersions) : null,
      });
    });
  }

  /** See {@link WorkerStore.workerHeartbeat}. */
  async workerHeartbeat({ workerId, status }: WorkerHeartbeatParams): Promise<void> {
    await this.conn.use((s) => {
      s.statement("heartbeat").run({ id: workerId, status });
    });
  }

  /** See {@link WorkerStore.workerMarkStopped}. */
  async workerMarkStopped({ workerId, exitReason }: WorkerMarkStoppedParams): Promise<void> {
    await this.conn.use((s) => {
      if (exitReason === undefined) {
        s.statement("markWorkerStopped").run({ id: workerId });
        return;
      }
      // One transaction: counted once, only when this mark is the one that stopped the row.
      s.immediate(() => {
        const row = s.statement("workerStatus").get({ id: workerId }) as
          | { status: string }
          | undefined;
        s.statement("markWorkerStopped").run({ id: workerId });
        if (row !== undefined && row.status !== "stopped") {
          s.statement("countWorkerExit").run({ reason: exitReason });
        }
      });
    });
  }

  /** See {@link WorkerStore.workerExitCounts}. */
  async workerExitCounts(): Promise<WorkerExitCount[]> {
    return this.conn.use((s) => {
      const rows = s.statement("workerExitCounts").all() as Array<{
        exit_reason: string;
        exits: number;
        last_at: number;
      }>;
      return exitCounts(
        rows.map((r) => ({ reason: r.exit_reason, exits: r.exits, lastAt: new Date(r.last_at) })),
      );
    });
  }

  /** See {@link WorkerStore.workerList}. */
  async workerList({ heartbeatTimeoutSeconds }: WorkerListParams): Promise<WorkerListRow[]> {
    return this.conn.use((s) => {
      const rows = s
        .statement("listWorkers")
        .all({ timeoutMs: secondsToMs(heartbeatTimeoutSeconds) }) as Array<
        WorkerRecord & { live: number }
      >;
      return rows.map(({ live, ...row }) => ({ ...toWorkerRow(row), live: live === 1 }));
    });
  }

  /** See {@link WorkerStore.workerForget}. */
  async workerForget({ notSeenForSeconds, limit }: WorkerForgetParams): Promise<number> {
    const notSeenForMs = secondsToMs(notSeenForSeconds);
    return this.conn.use(
      (s) => s.statement("forgetWorkers").run({ notSeenForMs, limit: limit ?? -1 }).changes,
    );
  }
}
