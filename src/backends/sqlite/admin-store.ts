/**
 * The SQLite implementation of the operations contract (contract: admin-store.ts), as
 * marshalling and `BEGIN IMMEDIATE` transactions around the named statements of sql.ts
 * ("Operations" section). Reached as `SqliteBackend.admin`. Notifications are in-process only
 * (cancel requests and queue wake-ups reach this object's subscribers; other processes learn a
 * cancel request from their next heartbeat and a resumed queue from their next poll).
 */

import { SoniqError } from "../../errors.js";
import type {
  AdminStore,
  CancelRequestState,
  DeadLetterFilter,
  DeadLetterListParams,
  DeadLetterQueuedParams,
  JobActionState,
  JobDetailRow,
  JobEvent,
  JobEventKind,
  JobFilter,
  JobListItem,
  JobListParams,
  KeyFlowRow,
  NewJobEvent,
  Page,
  QueuedGroup,
  QueuedGroupCount,
  QueueHistory,
  QueueHistoryParams,
  QueueInfo,
  QueueSetParams,
  QueueStatusCount,
  RateKeyInfo,
  WorkerBeatParams,
  WorkerCapability,
  WorkerDetail,
} from "../contract/admin-store.js";
import type { DeadLetterRow, Owner } from "../contract/index.js";
import { decodeCursor, encodeCursor, isTimeOrderedId } from "../shared/cursor.js";
import { countableByCounters } from "../shared/job-tables.js";
import {
  type DetailedRecord,
  deadFilterParams,
  jobFilterParams,
  type ListedRecord,
  type QueueRecord,
  toQueueInfo,
  toWorkerDetail,
  type WorkerDetailRecord,
} from "./admin-params.js";
import { secondsToMs } from "./clock.js";
import type { SqliteConnection, SqliteSession } from "./connection.js";
import { type CountedRow, countOne, countOutcome } from "./finished-counts.js";
import { type DeadLetterRecord, toDeadLetterRow, toDetailed, toListed } from "./rows.js";
import { ID_MAX, TIME_MAX } from "./sql.js";
import {
  CANCEL_OWNED,
  CANCEL_QUEUED,
  fence,
  finishJob,
  releaseKey,
  takeDedupKey,
} from "./transactions.js";

/** Appends one event inside the caller's unit of work. */
function appendEvent(s: SqliteSession, e: NewJobEvent): void {
  s.statement("eventAppend").run({
    jobId: e.jobId,
    kind: e.kind,
    attempt: e.attempt ?? null,
    workerId: e.workerId ?? null,
    detail: e.detail ?? null,
  });
}

/** The error of a retry-now whose dedup key another job holds (as a replay's). */
function dedupConflict(id: string, holder: string): SoniqError {
  return new SoniqError("DEDUP_CONFLICT", `job ${holder} already holds the dedup key of ${id}`, {
    details: { id, holderId: holder },
  });
}

/** A finished row deleted (`deleteFinishedJob`): counted as gone. */
type GoneRow = CountedRow & { dedup_key: string | null; status: "done" | "cancelled" };

/** See the module comment. */
export class SqliteAdminStore implements AdminStore {
  private readonly cancelListeners = new Set<(jobId: string) => void>();

  constructor(
    private readonly conn: SqliteConnection,
    private readonly wake: (queue: string) => void,
  ) {}

  /**
   * Newest first by id (contract: admin-store.ts `Page`), from one snapshot: the UUIDv7 rows of
   * both job tables by id (sql.ts `jobListById`), then, when the page is not full, the legacy rows
   * by `created_at` (`jobListLegacy`). A cursor whose id is a UUIDv7 continues the first segment;
   * any other continues the second. Each table is read as a window of at most `LIST_WINDOW`
   * rows below the cursor (sql.ts `jobListCuts`): when a window is cut short, the page holds
   * only rows above the cut and the next page starts below it — a short page with a cursor when
   * a filter matches rarely, as on PostgreSQL.
   */
  async jobList(params: JobListParams): Promise<Page<JobListItem>> {
    const cursor = decodeCursor(params.cursor);
    const filter = jobFilterParams(params.filter);
    const want = params.limit + 1;
    /** Set when a table's window was cut short: the next page starts below this id. */
    let bound: string | null = null;
    const rows = await this.conn.use((s) =>
      s.db.transaction((): ListedRecord[] => {
        if (cursor !== null && !isTimeOrderedId(cursor.id)) {
          const beforeMs = Number(cursor.time);
          const after = { ...filter, beforeMs, beforeId: cursor.id, limit: want };
          return s.statement("jobListLegacy").all(after) as ListedRecord[];
        }
        const beforeId = cursor === null ? ID_MAX : cursor.id;
        const cuts = s.statement("jobListCuts").get({ ...filter, beforeId }) as {
          live_cut: string | null;
          finished_cut: string | null;
        };
        const cut = [cuts.live_cut, cuts.finished_cut].reduce<string | null>(
          (high, id) => (id !== null && (high === null || id > high) ? id : high),
          null,
        );
        const page = s
          .statement("jobListById")
          .all({ ...filter, beforeId, lowId: cut ?? "", limit: want }) as ListedRecord[];
        if (page.length < want && cut !== null) {
          bound = cut;
        } else if (page.length < want) {
          const start = { ...filter, beforeMs: TIME_MAX, beforeId: ID_MAX };
          const legacy = s
            .statement("jobListLegacy")
            .all({ ...start, limit: want - page.length }) as ListedRecord[];
          page.push(...legacy);
        }
        return page;
      })(),
    );
    const items = rows.slice(0, params.limit);
    const last = rows.length > params.limit ? items.at(-1) : undefined;
    return {
      items: items.map(toListed),
      nextCursor: last
        ? encodeCursor({ time: String(last.created_at), id: last.id })
        : bound !== null
          ? encodeCursor({ time: "0", id: bound })
          : null,
    };
  }

  async jobCount(params: { filter: JobFilter }): Promise<number> {
    if (countableByCounters(params.filter)) {
      const { statuses, queues } = jobFilterParams(params.filter);
      return this.conn.use(
        (s) => (s.statement("jobCountByCounters").get({ statuses, queues }) as { n: number }).n,
      );
    }
    return this.conn.use(
      (s) => (s.statement("jobCount").get(jobFilterParams(params.filter)) as { n: number }).n,
    );
  }

  async jobCountByQueueStatus(): Promise<QueueStatusCount[]> {
    const rows = await this.conn.use(
      (s) =>
        s.statement("jobCountByQueueStatus").all() as Array<{
          queue: string;
          status: QueueStatusCount["status"];
          n: number;
        }>,
    );
    return rows.map((r) => ({ queue: r.queue, status: r.status, count: r.n }));
  }

  async jobDetail(params: { id: string }): Promise<JobDetailRow | null> {
    const row = await this.conn.use(
      (s) => s.statement("jobGet").get({ id: params.id }) as DetailedRecord | undefined,
    );
    return row ? toDetailed(row) : null;
  }

  async jobEventsAppend(params: { events: readonly NewJobEvent[] }): Promise<void> {
    if (params.events.length === 0) return;
    await this.conn.use((s) =>
      s.immediate(() => {
        for (const e of params.events) appendEvent(s, e);
      }),
    );
  }

  async jobEventsList(params: { jobId: string }): Promise<JobEvent[]> {
    const rows = await this.conn.use(
      (s) =>
        s.statement("eventsList").all({ jobId: params.jobId }) as Array<{
          seq: number;
          job_id: string;
          at: number;
          kind: string;
          attempt: number | null;
          worker_id: string | null;
          detail: string | null;
        }>,
    );
    return rows.map((r) => ({
      seq: r.seq,
      jobId: r.job_id,
      at: new Date(r.at),
      kind: r.kind as JobEventKind,
      attempt: r.attempt,
      workerId: r.worker_id,
      detail: r.detail,
    }));
  }

  async jobEventsPrune(params: { olderThanSeconds: number; limit: number }): Promise<number> {
    const ageMs = secondsToMs(params.olderThanSeconds);
    return this.conn.use(
      (s) => s.statement("eventsPrune").run({ ageMs, limit: params.limit }).changes,
    );
  }

  async jobCancelRequest(params: {
    id: string;
    retentionSeconds: number;
  }): Promise<CancelRequestState> {
    const retentionMs = secondsToMs(params.retentionSeconds);
    const state = await this.conn.use((s) =>
      s.immediate((): CancelRequestState => {
        const job = s.statement("jobState").get({ id: params.id }) as
          | { status: string; attempts: number; worker_id: string | null; claim_token: string }
          | undefined;
        if (!job) return "not_found";
        const now = s.nowMs();
        if (job.status === "queued") {
          finishJob(s, CANCEL_QUEUED, { id: params.id }, retentionMs);
          appendEvent(s, { jobId: params.id, kind: "cancelled" });
          return "cancelled";
        }
        if (job.status !== "processing") return "finished";
        const bound = s.statement("cancelToken").get({ id: params.id }) as
          | { cancel_claim_token: string | null }
          | undefined;
        if (bound?.cancel_claim_token === job.claim_token) return "already_requested";
        s.statement("cancelRequest").run({ id: params.id, now, claimToken: job.claim_token });
        appendEvent(s, {
          jobId: params.id,
          kind: "cancel_requested",
          attempt: job.attempts + 1,
          workerId: job.worker_id,
        });
        return "requested";
      }),
    );
    if (state === "requested") {
      for (const listener of this.cancelListeners) queueMicrotask(() => listener(params.id));
    }
    return state;
  }

  async jobCancelFinish(params: {
    id: string;
    owner: Owner;
    retentionSeconds: number;
  }): Promise<boolean> {
    const retentionMs = secondsToMs(params.retentionSeconds);
    return this.conn.use((s) =>
      s.immediate(() => {
        const owned = { id: params.id, ...fence(params.owner), now: s.nowMs() };
        const row = finishJob(s, CANCEL_OWNED, owned, retentionMs);
        if (!row) return false;
        appendEvent(s, {
          jobId: params.id,
          kind: "cancelled",
          attempt: (row.attempts ?? 0) + 1,
          workerId: params.owner.workerId,
          detail: "stopped by its worker",
        });
        return true;
      }),
    );
  }

  /**
   * A queued job is made due now; a finished one moves back into `soniq_jobs` as queued and takes
   * its dedup key again — refused with `DEDUP_CONFLICT` (nothing changed) when another job holds
   * it now (a batch's member is pending in its batch again: its next end counts once). A
   * processing job is refused.
   */
  async jobRetryNow(params: { id: string }): Promise<JobActionState> {
    const result = await this.conn.use((s) =>
      s.immediate((): { state: JobActionState; queue?: string } => {
        const { id } = params;
        const now = s.nowMs();
        type Moved = { queue: string; dedup_key: string | null } | undefined;
        let moved = s.statement("retryNow").get({ id, now }) as Moved;
        if (!moved) {
          moved = s.statement("retryNowFinished").get({ id, now }) as Moved;
          if (moved) {
            const gone = s.statement("deleteFinishedJob").get({ id }) as GoneRow;
            countOne(s, gone, `${gone.status}_gone`);
            const failed = gone.status === "done" ? 0 : 1;
            s.statement("batchMemberRearm").run({ id, failed });
            if (moved.dedup_key !== null) {
              const holder = takeDedupKey(s, moved.dedup_key, id, now);
              // Held by another job: nothing changes (the transaction rolls back).
              if (holder !== undefined) throw dedupConflict(id, holder);
            }
          }
        }
        if (!moved) {
          return {
            state: s.statement("jobState").get({ id: params.id }) ? "processing" : "not_found",
          };
        }
        s.statement("deleteControls").run({ id: params.id });
        appendEvent(s, { jobId: params.id, kind: "run_now" });
        return { state: "done", queue: moved.queue };
      }),
    );
    if (result.queue !== undefined) this.wake(result.queue);
    return result.state;
  }

  /**
   * A queued or finished job is deleted from its table, and its dedup key released; a deleted
   * live job ends `cancelled` for its workflow (workflows: the jobs waiting for it, its batch
   * when a member, its flow when the root).
   */
  async jobDelete(params: { id: string }): Promise<JobActionState> {
    return this.conn.use((s) =>
      s.immediate((): JobActionState => {
        const { id } = params;
        type Deleted = { dedup_key: string | null } | undefined;
        let row = s.statement("deleteIdleJob").get({ id }) as Deleted;
        if (row !== undefined) {
          // Its end, as a cancel's: its batch counts it, its flow (if its root) finishes, the
          // jobs waiting for it apply their policies (in the order a finish's trigger runs them).
          s.statement("batchMemberDeleted").run({ id });
          s.statement("flowRootDeleted").run({ id });
          s.statement("flowEndDeleted").run({ id });
        } else {
          const gone = s.statement("deleteFinishedJob").get({ id }) as GoneRow | undefined;
          if (gone !== undefined) countOne(s, gone, `${gone.status}_gone`);
          row = gone;
        }
        if (row === undefined) {
          return s.statement("jobState").get({ id }) ? "processing" : "not_found";
        }
        releaseKey(s, row.dedup_key, id);
        s.statement("deleteControls").run({ id: params.id });
        appendEvent(s, { jobId: params.id, kind: "deleted" });
        return "done";
      }),
    );
  }

  subscribeCancel(listener: (jobId: string) => void): () => void {
    this.cancelListeners.add(listener);
    return () => {
      this.cancelListeners.delete(listener);
    };
  }

  async deadLetterList(params: DeadLetterListParams): Promise<Page<DeadLetterRow>> {
    const cursor = decodeCursor(params.cursor);
    const rows = await this.conn.use(
      (s) =>
        s.statement("deadLetterList").all({
          ...deadFilterParams(params.filter),
          cursorMs: cursor ? Number(cursor.time) : null,
          cursorId: cursor ? cursor.id : null,
          limit: params.limit + 1,
        }) as DeadLetterRecord[],
    );
    const items = rows.slice(0, params.limit);
    const last = rows.length > params.limit ? items.at(-1) : undefined;
    return {
      items: items.map(toDeadLetterRow),
      nextCursor: last ? encodeCursor({ time: String(last.dead_at), id: last.id }) : null,
    };
  }

  async deadLetterCount(params: { filter: DeadLetterFilter }): Promise<number> {
    return this.conn.use(
      (s) =>
        (s.statement("deadLetterCount").get(deadFilterParams(params.filter)) as { n: number }).n,
    );
  }

  async deadLetterCountByReason(): Promise<Record<string, number>> {
    return this.conn.use((s) => {
      const rows = s.statement("deadLetterCountByReason").all() as { reason: string; n: number }[];
      return Object.fromEntries(rows.map((r) => [r.reason, r.n]));
    });
  }

  async deadLetterDelete(params: { ids: readonly string[] }): Promise<number> {
    return this.conn.use((s) =>
      s.immediate(() => {
        let gone = 0;
        for (const id of new Set(params.ids)) {
          if (s.statement("deleteDeadLetter").run({ id }).changes > 0) {
            gone += 1;
            appendEvent(s, { jobId: id, kind: "deleted", detail: "from the dead-letter queue" });
          }
        }
        return gone;
      }),
    );
  }

  async deadLetterPrune(params: { olderThanSeconds: number; limit: number }): Promise<number> {
    const ageMs = secondsToMs(params.olderThanSeconds);
    return this.conn.use(
      (s) => s.statement("deadLetterPrune").run({ ageMs, limit: params.limit }).changes,
    );
  }

  async jobControlsPrune(params: { limit: number }): Promise<number> {
    const limit = params.limit;
    return this.conn.use((s) => s.statement("controlsPrune").run({ limit }).changes);
  }

  async rateKeyList({ limit }: { limit: number }): Promise<RateKeyInfo[]> {
    const rows = await this.conn.use(
      (s) =>
        s.statement("rateKeyList").all({ limit }) as Array<{
          key: string;
          n: number;
          next_at: number | null;
          until: number | null;
        }>,
    );
    return rows.map((r) => ({
      key: r.key,
      startsInWindow: r.n,
      nextWindowAt: r.next_at === null ? null : new Date(r.next_at),
      pausedUntil: r.until === null ? null : new Date(r.until),
    }));
  }

  async keyFlowList({ queue }: { queue: string | null }): Promise<KeyFlowRow[]> {
    const rows = await this.conn.use(
      (s) =>
        s.statement("keyFlowList").all({ queue }) as Array<{
          queue: string;
          key: string;
          due: number;
          running: number;
          lim: number | null;
          rate_lim: number | null;
          started: number;
          next_at: number | null;
          until: number | null;
        }>,
    );
    return rows.map((r) => ({
      queue: r.queue,
      key: r.key,
      due: r.due,
      running: r.running,
      concurrencyLimit: r.lim,
      rateLimit: r.rate_lim,
      startsInWindow: r.started,
      firstStartExpiresAt: r.next_at === null ? null : new Date(r.next_at),
      pausedUntil: r.until === null ? null : new Date(r.until),
    }));
  }

  async queueList(): Promise<QueueInfo[]> {
    const rows = await this.conn.use((s) => s.statement("queueList").all() as QueueRecord[]);
    return rows.map(toQueueInfo);
  }

  /** One read of `soniq_job_counts`. See {@link AdminStore.queueHistory}. */
  async queueHistory(params: QueueHistoryParams): Promise<QueueHistory> {
    const queue = params.queue ?? null;
    return this.conn.use((s) => {
      const now = s.nowMs();
      const since = Math.floor((now - secondsToMs(params.windowSeconds)) / 60_000) * 60_000;
      const rows = s.statement("queueHistory").all({ since, queue }) as Array<{
        minute: number;
        done: number;
        failed: number;
        dead: number;
        cancelled: number;
        wait_s: number;
      }>;
      return {
        queue,
        since: new Date(since),
        until: new Date(now),
        points: rows.map((r) => ({
          minute: new Date(r.minute),
          done: r.done,
          failed: r.failed,
          dead: r.dead,
          cancelled: r.cancelled,
          waitAvgSeconds: r.done > 0 ? r.wait_s / r.done : null,
        })),
      };
    });
  }

  async queueSet(params: QueueSetParams): Promise<QueueInfo> {
    await this.conn.use((s) => {
      s.statement("queueSet").run({
        name: params.name,
        paused: params.paused === undefined ? null : params.paused ? 1 : 0,
        setMax: params.maxRunning === undefined ? 0 : 1,
        maxRunning: params.maxRunning ?? null,
        setUnclaimable: params.unclaimableAfter === undefined ? 0 : 1,
        unclaimableAfter: params.unclaimableAfter ?? null,
      });
    });
    this.wake(params.name);
    const info = (await this.queueList()).find((q) => q.name === params.name);
    if (!info) throw new Error(`queue ${params.name} vanished after it was set`);
    return info;
  }

  async workerDeclare(params: {
    workerId: string;
    heartbeatTimeoutSeconds: number;
  }): Promise<void> {
    await this.conn.use((s) => {
      s.statement("workerDeclare").run({
        id: params.workerId,
        timeoutMs: secondsToMs(params.heartbeatTimeoutSeconds),
      });
    });
  }

  async workerBeat(params: WorkerBeatParams): Promise<{ cancelRequested: string[] }> {
    const beat = () => (s: SqliteSession) => {
      s.statement("workerBeat").run({
        id: params.workerId,
        status: params.status,
        state: params.shutdownState,
        drainElapsedMs:
          params.drainElapsedSeconds === null ? null : secondsToMs(params.drainElapsedSeconds),
        deadlineInMs:
          params.deadlineInSeconds === null ? null : secondsToMs(params.deadlineInSeconds),
      });
      const write = s.statement("progressWrite");
      for (const p of params.progress) {
        write.run({
          id: p.id,
          ...fence(p.owner),
          progress: p.fraction,
          message: p.message,
        });
      }
      return (
        s.statement("cancelPending").all({ workerId: params.workerId }) as Array<{ id: string }>
      ).map((r) => r.id);
    };
    const ids = await this.conn.use((s) =>
      params.progress.length === 0 ? beat()(s) : s.immediate(() => beat()(s)),
    );
    return { cancelRequested: ids };
  }

  async workerDetails(params: { defaultHeartbeatTimeoutSeconds: number }): Promise<WorkerDetail[]> {
    const timeoutMs = secondsToMs(params.defaultHeartbeatTimeoutSeconds);
    const rows = await this.conn.use(
      (s) => s.statement("workerList").all({ timeoutMs }) as WorkerDetailRecord[],
    );
    return rows.map(toWorkerDetail);
  }

  /** One UPDATE. See {@link AdminStore.workerRecordJobs}. */
  async workerRecordJobs(params: {
    workerId: string;
    jobVersions: Readonly<Record<string, number>>;
  }): Promise<void> {
    await this.conn.use((s) => {
      s.statement("workerRecordJobs").run({
        id: params.workerId,
        jobVersions: JSON.stringify(params.jobVersions),
      });
    });
  }

  /** One read of the live worker rows. See {@link AdminStore.workerCapabilities}. */
  async workerCapabilities(params: {
    defaultHeartbeatTimeoutSeconds: number;
  }): Promise<WorkerCapability[]> {
    const timeoutMs = secondsToMs(params.defaultHeartbeatTimeoutSeconds);
    const rows = await this.conn.use(
      (s) =>
        s.statement("workerCapabilities").all({ timeoutMs }) as Array<{
          id: string;
          queues: string | null;
          job_versions: string | null;
        }>,
    );
    return rows.map((r) => ({
      workerId: r.id,
      queues: r.queues === null ? null : (JSON.parse(r.queues) as string[]),
      jobVersions:
        r.job_versions === null ? null : (JSON.parse(r.job_versions) as Record<string, number>),
    }));
  }

  /** A skip-scan, one index probe per group. See {@link AdminStore.jobQueuedGroups}. */
  async jobQueuedGroups(): Promise<QueuedGroup[]> {
    return this.conn.use((s) => {
      const first = s.statement("queuedGroupFirst");
      const next = s.statement("queuedGroupAfter");
      const groups: QueuedGroup[] = [];
      let after: QueuedGroup | null = null;
      for (;;) {
        const row = (after === null ? first.get() : next.get({ ...after })) as
          | QueuedGroup
          | undefined;
        if (row === undefined) return groups;
        after = { queue: row.queue, name: row.name, version: row.version };
        groups.push(after);
      }
    });
  }

  /** A range read per group. See {@link AdminStore.jobQueuedGroupCounts}. */
  async jobQueuedGroupCounts(params: {
    groups: readonly QueuedGroup[];
  }): Promise<QueuedGroupCount[]> {
    return this.conn.use((s) => {
      const count = s.statement("queuedGroupCount");
      const out: QueuedGroupCount[] = [];
      for (const g of params.groups) {
        const row = count.get({ queue: g.queue, name: g.name, version: g.version }) as {
          n: number;
          oldest_ms: number | null;
        };
        if (row.n === 0) continue;
        out.push({ ...g, count: row.n, oldestAgeSeconds: Math.max(0, row.oldest_ms ?? 0) / 1000 });
      }
      return out;
    });
  }

  /** One immediate transaction. See {@link AdminStore.jobDeadLetterQueued}. */
  async jobDeadLetterQueued(params: DeadLetterQueuedParams): Promise<string[]> {
    return this.conn.use((s) => {
      const pick = s.statement("queuedGroupDue");
      const move = s.statement("deadLetterQueued");
      const remove = s.statement("deleteJob");
      return s.immediate(() => {
        const now = s.nowMs();
        const due = pick.all({
          queue: params.queue,
          name: params.name,
          version: params.version,
          dueForMs: secondsToMs(params.dueForSeconds),
          limit: params.limit,
        }) as Array<{ id: string; dedup_key: string | null }>;
        const moved: string[] = [];
        for (const row of due) {
          const copied = move.get({
            id: row.id,
            error: params.error,
            reason: params.reason,
            now,
          }) as { queue: string } | undefined;
          if (copied === undefined) continue;
          remove.run({ id: row.id });
          releaseKey(s, row.dedup_key, row.id);
          countOutcome(s, copied.queue, "dead");
          moved.push(row.id);
        }
        return moved;
      });
    });
  }
}
