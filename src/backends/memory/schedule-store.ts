/**
 * The memory backend's schedule store: the {@link ScheduleStore} contract on in-process maps.
 * Each write runs synchronously from its compare-and-set to its last row, so no other caller can
 * interleave with it — the memory equivalent of one transaction.
 */
import { SoniqError } from "../../errors.js";
import type {
  DueSchedules,
  EnqueueResult,
  NewJob,
  ScheduleAdvanceParams,
  ScheduleAdvanceResult,
  ScheduleDueParams,
  ScheduleIdParams,
  ScheduleRow,
  ScheduleRunRow,
  ScheduleRunsParams,
  ScheduleSaveParams,
  ScheduleStore,
} from "../contract/index.js";
import type { MemoryState } from "./state.js";

/** What the store needs besides the shared state. */
export interface MemoryScheduleStorePort {
  /** Inserts jobs synchronously (the job store's enqueue body). */
  insertJobs: (jobs: readonly NewJob[]) => EnqueueResult[];
}

type StoredSchedule = Omit<ScheduleRow, "lastJobActive">;

/** See the module comment. */
export class MemoryScheduleStore implements ScheduleStore {
  private readonly rows = new Map<string, StoredSchedule>();
  private readonly runs = new Map<string, ScheduleRunRow[]>();

  /**
   * @param state The backend's shared state (clock, jobs, closed guard).
   * @param port The job store's synchronous insert.
   */
  constructor(
    private readonly state: MemoryState,
    private readonly port: MemoryScheduleStorePort,
  ) {}

  private view(row: StoredSchedule): ScheduleRow {
    const status = row.lastJobId === null ? undefined : this.state.jobs.get(row.lastJobId)?.status;
    return {
      ...row,
      startAt: copy(row.startAt),
      endAt: copy(row.endAt),
      nextRunAt: copy(row.nextRunAt),
      lastRunAt: copy(row.lastRunAt),
      lastJobActive: status === "queued" || status === "processing",
    };
  }

  async scheduleSave({ spec, nextRunAt, expectRevision }: ScheduleSaveParams): Promise<boolean> {
    this.state.check();
    const now = new Date(this.state.clock());
    const existing = this.rows.get(spec.id);
    if (expectRevision === null) {
      if (existing) return false;
      this.rows.set(spec.id, {
        ...spec,
        startAt: copy(spec.startAt),
        endAt: copy(spec.endAt),
        nextRunAt: copy(nextRunAt),
        lastRunAt: null,
        lastJobId: null,
        paused: false,
        revision: 1,
        createdAt: now,
        updatedAt: now,
      });
      return true;
    }
    if (!existing || existing.revision !== expectRevision) return false;
    this.rows.set(spec.id, {
      ...existing,
      ...spec,
      startAt: copy(spec.startAt),
      endAt: copy(spec.endAt),
      nextRunAt: copy(nextRunAt),
      revision: existing.revision + 1,
      updatedAt: now,
    });
    return true;
  }

  async scheduleGet({ id }: ScheduleIdParams): Promise<ScheduleRow | null> {
    this.state.check();
    const row = this.rows.get(id);
    return row ? this.view(row) : null;
  }

  async scheduleList(): Promise<ScheduleRow[]> {
    this.state.check();
    return [...this.rows.values()]
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((row) => this.view(row));
  }

  async scheduleDue({ overdueSeconds }: ScheduleDueParams): Promise<DueSchedules> {
    this.state.check();
    const now = this.state.clock();
    const limit = now - Math.round(overdueSeconds * 1000);
    let next: number | null = null;
    const due: ScheduleRow[] = [];
    for (const row of this.rows.values()) {
      if (row.nextRunAt === null) continue;
      const at = row.nextRunAt.getTime();
      if (at <= limit) due.push(this.view(row));
      else if (next === null || at < next) next = at;
    }
    due.sort((a, b) => (a.nextRunAt?.getTime() ?? 0) - (b.nextRunAt?.getTime() ?? 0));
    return { now: new Date(now), due, nextDueAt: next === null ? null : new Date(next) };
  }

  async scheduleAdvance(params: ScheduleAdvanceParams): Promise<ScheduleAdvanceResult> {
    this.state.check();
    const row = this.rows.get(params.id);
    if (
      !row ||
      row.revision !== params.expect.revision ||
      (row.nextRunAt?.getTime() ?? null) !== (params.expect.nextRunAt?.getTime() ?? null)
    ) {
      return { advanced: false, jobs: [] };
    }
    const now = new Date(this.state.clock());
    const jobs = params.runs.flatMap((run) => (run.job ? [run.job] : []));
    const results = jobs.length > 0 ? this.port.insertJobs(jobs) : [];
    let k = 0;
    const history = this.runs.get(params.id) ?? [];
    for (const run of params.runs) {
      const jobId = run.job ? (results[k++]?.id ?? null) : null;
      history.push({
        scheduleId: params.id,
        occurrence: new Date(run.occurrence.getTime()),
        outcome: run.outcome,
        jobId,
        manual: run.manual,
        recordedAt: now,
      });
      if (!run.manual) row.lastRunAt = new Date(run.occurrence.getTime());
      if (jobId !== null) row.lastJobId = jobId;
    }
    if (history.length > row.historyLimit) history.splice(0, history.length - row.historyLimit);
    this.runs.set(params.id, history);
    row.nextRunAt = copy(params.nextRunAt);
    if (params.paused !== undefined) {
      row.paused = params.paused;
      row.revision += 1;
    }
    row.updatedAt = now;
    return { advanced: true, jobs: results };
  }

  async scheduleRemove({ id }: ScheduleIdParams): Promise<boolean> {
    this.state.check();
    this.runs.delete(id);
    return this.rows.delete(id);
  }

  async scheduleRuns({ id, limit }: ScheduleRunsParams): Promise<ScheduleRunRow[]> {
    this.state.check();
    if (!Number.isInteger(limit) || limit < 0) {
      throw new SoniqError("INVALID_OPTION", `limit must be an integer >= 0, got ${limit}`);
    }
    const all = this.runs.get(id) ?? [];
    return (limit === 0 ? [] : all.slice(-limit)).reverse().map((run) => ({ ...run }));
  }
}

function copy(date: Date | null): Date | null {
  return date === null ? null : new Date(date.getTime());
}
