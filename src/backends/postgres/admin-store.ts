/**
 * The PostgreSQL implementation of the operations contract (contract: admin-store.ts), over the
 * statements of `buildAdminStatements` (sql.ts). Reached as `PostgresBackend.admin`; it runs its
 * statements through the backend's pool (same prepared statements, same CLOSED and
 * SCHEMA_NOT_READY translation). Cancel requests NOTIFY `!cancel <id>` on the backend's channel;
 * this process's own subscribers are called directly (the backend skips its own notifications).
 */

import { SoniqError } from "../../errors.js";
import {
  type AdminStore,
  CANCEL_NOTIFY_PREFIX,
  type CancelRequestState,
  type DeadLetterFilter,
  type DeadLetterListParams,
  type DeadLetterQueuedParams,
  type HistoryPoint,
  type JobActionState,
  type JobDetailRow,
  type JobEvent,
  type JobEventKind,
  type JobFilter,
  type JobListItem,
  type JobListParams,
  type KeyFlowRow,
  type NewJobEvent,
  type Page,
  type QueuedGroup,
  type QueuedGroupCount,
  type QueueHistory,
  type QueueHistoryParams,
  type QueueInfo,
  type QueueSetParams,
  type QueueStatusCount,
  type RateKeyInfo,
  type WorkerBeatParams,
  type WorkerCapability,
  type WorkerDetail,
  type WorkerShutdownState,
} from "../contract/admin-store.js";
import type { DeadLetterRow } from "../contract/index.js";
import { decodeCursor, encodeCursor } from "../shared/cursor.js";
import { countableByCounters, jobTablesFor } from "../shared/job-tables.js";
import {
  deadFilterParams,
  jobFilterParams,
  type RawDetailedJob,
  type RawListedJob,
  withoutNul,
} from "./admin-params.js";
import { isUuid } from "./identifiers.js";
import {
  type RawDeadLetterRow,
  type RawWorkerRow,
  toDeadLetterRow,
  toDetailed,
  toListed,
  toWorkerRow,
} from "./rows.js";
import type { AdminStatements } from "./sql.js";

/** What the store needs from its backend. */
export interface PgAdminHost {
  readonly channel: string;
  readonly sql: AdminStatements;
  /** Runs one statement on the pool. */
  run<R>(text: string, values: unknown[]): Promise<{ rows: R[]; rowCount: number }>;
  /** Wakes this process's subscribers of `queue` (the NOTIFY of our own pool is skipped). */
  wake(queue: string): void;
}

/** PostgreSQL text cannot hold NUL. */
function storable(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : text.replaceAll("\u0000", "\uFFFD");
}

/** The cursor id of a first page: above every uuid, so a listing starts at the newest. */
const LIST_START = "ffffffff-ffff-ffff-ffff-ffffffffffff";

/** See the module comment. */
export class PgAdminStore implements AdminStore {
  private readonly cancelListeners = new Set<(jobId: string) => void>();
  /** The operations statements (sql.ts `buildAdminStatements`). */
  readonly sql: AdminStatements;

  constructor(private readonly host: PgAdminHost) {
    this.sql = host.sql;
  }

  /** Routes a notification payload; true when it was a cancel request (not a queue wake-up). */
  handleNotify(payload: string): boolean {
    if (!payload.startsWith(CANCEL_NOTIFY_PREFIX)) return false;
    this.cancelled(payload.slice(CANCEL_NOTIFY_PREFIX.length));
    return true;
  }

  private cancelled(jobId: string): void {
    for (const listener of this.cancelListeners) queueMicrotask(() => listener(jobId));
  }

  async jobList(params: JobListParams): Promise<Page<JobListItem>> {
    const cursor = decodeCursor(params.cursor);
    // The first page, or a cursor that is not ours: from the top of the time-ordered ids.
    const [time, id] = cursor && isUuid(cursor.id) ? [cursor.time, cursor.id] : ["-1", LIST_START];
    const { rows: answer } = await this.host.run<RawListedJob & { bound: string | null }>(
      this.host.sql.jobList[jobTablesFor(params.filter)],
      [...jobFilterParams(params.filter), time, id, params.limit + 1],
    );
    // An empty page comes back as one row holding only `bound`.
    const rows = answer.filter((row) => row.id !== null);
    const items = rows.slice(0, params.limit);
    const last = rows.length > params.limit ? items.at(-1) : undefined;
    // A page cut short by the read window: the next one starts below what was read.
    const bound = answer[0]?.bound ?? null;
    return {
      items: items.map(toListed),
      nextCursor: last
        ? encodeCursor({ time: last.cursor_us, id: last.id })
        : bound
          ? encodeCursor({ time: "-1", id: bound })
          : null,
    };
  }

  async jobCount(params: { filter: JobFilter }): Promise<number> {
    if (countableByCounters(params.filter)) {
      const { rows } = await this.host.run<{ n: string }>(this.host.sql.jobCountByCounters, [
        params.filter.status?.map(withoutNul) ?? null,
        params.filter.queue?.map(withoutNul) ?? null,
      ]);
      return Number(rows[0]?.n ?? 0);
    }
    const { rows } = await this.host.run<{ n: string }>(
      this.host.sql.jobCount[jobTablesFor(params.filter)],
      jobFilterParams(params.filter),
    );
    return Number(rows[0]?.n ?? 0);
  }

  async jobCountByQueueStatus(): Promise<QueueStatusCount[]> {
    const { rows } = await this.host.run<{ queue: string; status: string; n: string }>(
      this.host.sql.jobCountByQueueStatus,
      [],
    );
    return rows.map((r) => ({
      queue: r.queue,
      status: r.status as QueueStatusCount["status"],
      count: Number(r.n),
    }));
  }

  async jobDetail(params: { id: string }): Promise<JobDetailRow | null> {
    if (!isUuid(params.id)) return null;
    const { rows } = await this.host.run<RawDetailedJob>(this.host.sql.jobGet, [params.id]);
    return rows[0] ? toDetailed(rows[0]) : null;
  }

  async jobEventsAppend(params: { events: readonly NewJobEvent[] }): Promise<void> {
    const events = params.events.filter((e) => isUuid(e.jobId));
    if (events.length === 0) return;
    await this.host.run(this.host.sql.eventsAppend, [
      events.map((e) => e.jobId),
      events.map((e) => e.kind),
      events.map((e) => e.attempt ?? null),
      events.map((e) => e.workerId ?? null),
      events.map((e) => storable(e.detail)),
    ]);
  }

  async jobEventsList(params: { jobId: string }): Promise<JobEvent[]> {
    if (!isUuid(params.jobId)) return [];
    const { rows } = await this.host.run<{
      seq: string;
      job_id: string;
      at: Date;
      kind: string;
      attempt: number | null;
      worker_id: string | null;
      detail: string | null;
    }>(this.host.sql.eventsList, [params.jobId]);
    return rows.map((r) => ({
      seq: Number(r.seq),
      jobId: r.job_id,
      at: r.at,
      kind: r.kind as JobEventKind,
      attempt: r.attempt,
      workerId: r.worker_id,
      detail: r.detail,
    }));
  }

  async jobEventsPrune(params: { olderThanSeconds: number; limit: number }): Promise<number> {
    const { rowCount } = await this.host.run(this.host.sql.eventsPrune, [
      params.olderThanSeconds,
      params.limit,
    ]);
    return rowCount;
  }

  /**
   * Runs a statement that acts on one job wherever it is (live or finished) and answers no row
   * when there is no such job; an empty answer is asked once more. A job finishing at that moment
   * is invisible to the first run: the statement waits for the live row's lock, finds it gone,
   * and its snapshot predates the finished row (the second run's snapshot sees it).
   */
  private async onJob<R>(text: string, values: unknown[]): Promise<R[]> {
    const first = await this.host.run<R>(text, values);
    if (first.rows.length > 0) return first.rows;
    return (await this.host.run<R>(text, values)).rows;
  }

  async jobCancelRequest(params: {
    id: string;
    retentionSeconds: number;
  }): Promise<CancelRequestState> {
    if (!isUuid(params.id)) return "not_found";
    const rows = await this.onJob<{ status: string; cancelled: string; requested: string }>(
      this.host.sql.cancelRequest,
      [params.id, params.retentionSeconds, this.host.channel, CANCEL_NOTIFY_PREFIX],
    );
    const row = rows[0];
    if (!row) return "not_found";
    if (Number(row.cancelled) > 0) return "cancelled";
    if (Number(row.requested) > 0) {
      this.cancelled(params.id);
      return "requested";
    }
    return row.status === "processing" ? "already_requested" : "finished";
  }

  async jobCancelFinish(params: {
    id: string;
    owner: { workerId: string; claimToken: string };
    retentionSeconds: number;
  }): Promise<boolean> {
    if (!isUuid(params.id) || !isUuid(params.owner.claimToken)) return false;
    const { rowCount } = await this.host.run(this.host.sql.cancelFinish, [
      params.id,
      params.owner.workerId,
      params.owner.claimToken,
      params.retentionSeconds,
    ]);
    return rowCount > 0;
  }

  async jobRetryNow(params: { id: string }): Promise<JobActionState> {
    if (!isUuid(params.id)) return "not_found";
    const rows = await this.onJob<{
      status: string;
      moved: string;
      queue: string | null;
      holder_id: string | null;
    }>(this.host.sql.retryNow, [params.id, this.host.channel]).catch((err: unknown) => {
      // A live job of the previous version holds the key in the live table's unique index.
      if ((err as { code?: unknown }).code !== "23505") throw err;
      throw new SoniqError(
        "DEDUP_CONFLICT",
        `a live job already holds the dedup key of ${params.id}`,
        {
          cause: err,
          details: { id: params.id },
        },
      );
    });
    const row = rows[0];
    if (!row) return "not_found";
    if (row.holder_id !== null) {
      throw new SoniqError(
        "DEDUP_CONFLICT",
        `job ${row.holder_id} already holds the dedup key of ${params.id}`,
        { details: { id: params.id, holderId: row.holder_id } },
      );
    }
    if (Number(row.moved) === 0) return "processing";
    if (row.queue !== null) this.host.wake(row.queue);
    return "done";
  }

  async jobDelete(params: { id: string }): Promise<JobActionState> {
    if (!isUuid(params.id)) return "not_found";
    const rows = await this.onJob<{ status: string; gone: string }>(this.host.sql.jobDelete, [
      params.id,
    ]);
    const row = rows[0];
    if (!row) return "not_found";
    return Number(row.gone) > 0 ? "done" : "processing";
  }

  subscribeCancel(listener: (jobId: string) => void): () => void {
    this.cancelListeners.add(listener);
    return () => {
      this.cancelListeners.delete(listener);
    };
  }

  async deadLetterList(params: DeadLetterListParams): Promise<Page<DeadLetterRow>> {
    const cursor = decodeCursor(params.cursor);
    const cursorId = cursor && isUuid(cursor.id) ? cursor.id : null;
    const { rows } = await this.host.run<RawDeadLetterRow & { cursor_us: string }>(
      this.host.sql.deadLetterList,
      [
        ...deadFilterParams(params.filter),
        cursorId === null ? null : cursor?.time,
        cursorId,
        params.limit + 1,
      ],
    );
    const items = rows.slice(0, params.limit);
    const last = rows.length > params.limit ? items.at(-1) : undefined;
    return {
      items: items.map((r) => toDeadLetterRow(r)),
      nextCursor: last ? encodeCursor({ time: last.cursor_us, id: last.id }) : null,
    };
  }

  async deadLetterCount(params: { filter: DeadLetterFilter }): Promise<number> {
    const { rows } = await this.host.run<{ n: string }>(
      this.host.sql.deadLetterCount,
      deadFilterParams(params.filter),
    );
    return Number(rows[0]?.n ?? 0);
  }

  async deadLetterCountByReason(): Promise<Record<string, number>> {
    const { rows } = await this.host.run<{ reason: string; n: string }>(
      this.host.sql.deadLetterCountByReason,
      [],
    );
    return Object.fromEntries(rows.map((r) => [r.reason, Number(r.n)]));
  }

  async deadLetterDelete(params: { ids: readonly string[] }): Promise<number> {
    const ids = params.ids.filter(isUuid);
    if (ids.length === 0) return 0;
    const { rowCount } = await this.host.run(this.host.sql.deadLetterDelete, [ids]);
    return rowCount;
  }

  async deadLetterPrune(params: { olderThanSeconds: number; limit: number }): Promise<number> {
    const { rowCount } = await this.host.run(this.host.sql.deadLetterPrune, [
      params.olderThanSeconds,
      params.limit,
    ]);
    return rowCount;
  }

  async jobControlsPrune(params: { limit: number }): Promise<number> {
    const limit = params.limit;
    const { rowCount } = await this.host.run(this.host.sql.controlsPrune, [limit]);
    return rowCount;
  }

  async rateKeyList({ limit }: { limit: number }): Promise<RateKeyInfo[]> {
    const { rows } = await this.host.run<{
      key: string;
      n: string;
      next_at: Date | null;
      until: Date | null;
    }>(this.host.sql.rateKeyList, [limit]);
    return rows.map((r) => ({
      key: r.key,
      startsInWindow: Number(r.n),
      nextWindowAt: r.next_at,
      pausedUntil: r.until,
    }));
  }

  async keyFlowList({ queue }: { queue: string | null }): Promise<KeyFlowRow[]> {
    const { rows } = await this.host.run<{
      queue: string;
      key: string;
      due: string;
      running: string;
      lim: number | null;
      rate_lim: number | null;
      started: string;
      next_at: Date | null;
      until: Date | null;
    }>(this.host.sql.keyFlowList, [queue]);
    return rows.map((r) => ({
      queue: r.queue,
      key: r.key,
      due: Number(r.due),
      running: Number(r.running),
      concurrencyLimit: r.lim,
      rateLimit: r.rate_lim,
      startsInWindow: Number(r.started),
      firstStartExpiresAt: r.next_at,
      pausedUntil: r.until,
    }));
  }

  async queueList(): Promise<QueueInfo[]> {
    const { rows } = await this.host.run<{
      name: string;
      paused: boolean;
      paused_until: Date | null;
      max_running: number | null;
      unclaimable_after: number | null;
      updated_at: Date | null;
      queued: string;
      processing: string;
      oldest_due_s: number;
    }>(this.host.sql.queueList, []);
    return rows.map((r) => ({
      name: r.name,
      paused: r.paused,
      pausedUntil: r.paused_until,
      maxRunning: r.max_running,
      unclaimableAfter: r.unclaimable_after,
      queued: Number(r.queued),
      processing: Number(r.processing),
      oldestDueAgeSeconds: Number(r.oldest_due_s),
      updatedAt: r.updated_at,
    }));
  }

  /** One statement over `soniq_job_counts`. See {@link AdminStore.queueHistory}. */
  async queueHistory(params: QueueHistoryParams): Promise<QueueHistory> {
    const queue = params.queue ?? null;
    const { rows } = await this.host.run<{
      since: Date;
      until: Date;
      minute: Date | null;
      done: string | null;
      failed: string | null;
      dead: string | null;
      cancelled: string | null;
      wait_s: number | null;
    }>(this.host.sql.queueHistory, [params.windowSeconds, queue]);
    const first = rows[0];
    if (!first) throw new Error("queueHistory returned no row");
    const points: HistoryPoint[] = [];
    for (const r of rows) {
      if (r.minute === null) continue;
      const done = Number(r.done);
      points.push({
        minute: r.minute,
        done,
        failed: Number(r.failed),
        dead: Number(r.dead),
        cancelled: Number(r.cancelled),
        waitAvgSeconds: done > 0 ? Number(r.wait_s) / done : null,
      });
    }
    return { queue, since: first.since, until: first.until, points };
  }

  async queueSet(params: QueueSetParams): Promise<QueueInfo> {
    await this.host.run(this.host.sql.queueSet, [
      params.name,
      params.paused ?? null,
      params.maxRunning !== undefined,
      params.maxRunning ?? null,
      this.host.channel,
      params.unclaimableAfter !== undefined,
      params.unclaimableAfter ?? null,
    ]);
    this.host.wake(params.name);
    const all = await this.queueList();
    const found = all.find((q) => q.name === params.name);
    if (!found) throw new Error(`queue ${params.name} vanished after it was set`);
    return found;
  }

  async workerDeclare(params: {
    workerId: string;
    heartbeatTimeoutSeconds: number;
  }): Promise<void> {
    await this.host.run(this.host.sql.workerDeclare, [
      params.workerId,
      params.heartbeatTimeoutSeconds,
    ]);
  }

  async workerBeat(params: WorkerBeatParams): Promise<{ cancelRequested: string[] }> {
    const progress = params.progress.filter((p) => isUuid(p.id) && isUuid(p.owner.claimToken));
    const { rows } = await this.host.run<{ id: string }>(this.host.sql.workerBeat, [
      params.workerId,
      params.status,
      params.shutdownState,
      params.drainElapsedSeconds,
      params.deadlineInSeconds,
      progress.map((p) => p.id),
      progress.map((p) => p.owner.claimToken),
      progress.map((p) => p.fraction),
      progress.map((p) => storable(p.message)),
    ]);
    return { cancelRequested: rows.map((r) => r.id) };
  }

  async workerDetails(params: { defaultHeartbeatTimeoutSeconds: number }): Promise<WorkerDetail[]> {
    const { rows } = await this.host.run<
      RawWorkerRow & {
        heartbeat_timeout: number | null;
        shutdown_state: string;
        drain_started_at: Date | null;
        deadline_at: Date | null;
        age_s: number;
        live: boolean;
        in_flight: string[];
      }
    >(this.host.sql.workerList, [params.defaultHeartbeatTimeoutSeconds]);
    return rows.map((r) => ({
      ...toWorkerRow(r),
      heartbeatTimeoutSeconds: r.heartbeat_timeout,
      shutdownState: (r.status === "stopped" ? "STOPPED" : r.shutdown_state) as WorkerShutdownState,
      drainStartedAt: r.drain_started_at,
      deadlineAt: r.deadline_at,
      heartbeatAgeSeconds: Math.max(0, Number(r.age_s)),
      live: r.live,
      inFlight: r.in_flight,
    }));
  }

  /** One UPDATE. See {@link AdminStore.workerRecordJobs}. */
  async workerRecordJobs(params: {
    workerId: string;
    jobVersions: Readonly<Record<string, number>>;
  }): Promise<void> {
    await this.host.run(this.host.sql.workerRecordJobs, [
      params.workerId,
      JSON.stringify(params.jobVersions),
    ]);
  }

  /** One read of the live worker rows. See {@link AdminStore.workerCapabilities}. */
  async workerCapabilities(params: {
    defaultHeartbeatTimeoutSeconds: number;
  }): Promise<WorkerCapability[]> {
    const { rows } = await this.host.run<{
      id: string;
      queues: string[] | null;
      job_versions: Record<string, number> | null;
    }>(this.host.sql.workerCapabilities, [params.defaultHeartbeatTimeoutSeconds]);
    return rows.map((r) => ({ workerId: r.id, queues: r.queues, jobVersions: r.job_versions }));
  }

  /** One recursive skip-scan. See {@link AdminStore.jobQueuedGroups}. */
  async jobQueuedGroups(): Promise<QueuedGroup[]> {
    const { rows } = await this.host.run<QueuedGroup>(this.host.sql.queuedGroups, []);
    return rows.map((r) => ({ queue: r.queue, name: r.name, version: Number(r.version) }));
  }

  /** One statement, a range read per group. See {@link AdminStore.jobQueuedGroupCounts}. */
  async jobQueuedGroupCounts(params: {
    groups: readonly QueuedGroup[];
  }): Promise<QueuedGroupCount[]> {
    if (params.groups.length === 0) return [];
    const { rows } = await this.host.run<QueuedGroup & { n: string; oldest_s: number }>(
      this.host.sql.queuedGroupCounts,
      [
        params.groups.map((g) => g.queue),
        params.groups.map((g) => g.name),
        params.groups.map((g) => g.version),
      ],
    );
    return rows.map((r) => ({
      queue: r.queue,
      name: r.name,
      version: Number(r.version),
      count: Number(r.n),
      oldestAgeSeconds: Math.max(0, Number(r.oldest_s)),
    }));
  }

  /** One statement. See {@link AdminStore.jobDeadLetterQueued}. */
  async jobDeadLetterQueued(params: DeadLetterQueuedParams): Promise<string[]> {
    const { rows } = await this.host.run<{ id: string }>(this.host.sql.deadLetterQueued, [
      params.queue,
      params.name,
      params.version,
      params.dueForSeconds,
      withoutNul(params.error),
      withoutNul(params.reason),
      params.limit,
    ]);
    return rows.map((r) => r.id);
  }
}
