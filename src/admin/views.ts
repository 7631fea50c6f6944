/**
 * The shapes the admin API returns (and `--json` prints): jobs, dead letters and timeline entries
 * with arguments and results parsed from JSON, and how they are built from the store's rows. A
 * job's **timeline** is its row's happy path (enqueued → started → done) merged with the unusual
 * transitions the events table holds (docs/operations.md, "The timeline"), in time order.
 */
import type {
  DeadLetterRow,
  JobDetailRow,
  JobEvent,
  JobEventKind,
  JobListItem,
  JobListStatus,
  JobRow,
} from "../backends/contract/index.js";

/** Parses stored JSON text; text that is not JSON (never written by Soniq) comes back as is. */
function parsed(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A job as the admin API lists it (`soniq.jobs.list`): **no result** — a result may be megabytes
 * and no list shows it. `soniq.jobs.get(id)` (and `soniq jobs show`) returns a {@link JobView},
 * which carries it.
 */
export interface JobListView extends Omit<JobRow, "args" | "result" | "status"> {
  /**
   * The status as operators read it: `scheduled` for a queued job whose due time
   * (`scheduledAt`) is after the database's now when it was read, `queued` for a due one, else
   * the stored status.
   */
  status: JobListStatus;
  args: unknown;
  /** When an operator asked to cancel it while it ran; null otherwise. */
  cancelRequestedAt: Date | null;
  /** The last progress its handler reported (written with the heartbeat), or null. */
  progress: { fraction: number; message: string | null; at: Date | null } | null;
}

/** One job as the admin API shows it (`soniq.jobs.get`): a {@link JobListView} plus its result. */
export interface JobView extends JobListView {
  /** The handler's return value (parsed JSON), when `done`; null otherwise. */
  result: unknown;
}

/** A dead-letter entry as the admin API shows it. */
export interface DeadLetterView extends Omit<DeadLetterRow, "args"> {
  args: unknown;
}

/** Kinds of timeline entries: the row's own milestones plus the stored events. */
export type TimelineKind = "enqueued" | "started" | "done" | JobEventKind;

/** One entry of a job's timeline. */
export interface TimelineEntry {
  at: Date;
  kind: TimelineKind;
  /** The attempt it belongs to (1-based), when known. */
  attempt: number | null;
  workerId: string | null;
  detail: string | null;
}

/** A job (or dead letter) with its timeline. */
export type JobDetail =
  | (JobView & { timeline: TimelineEntry[] })
  | (DeadLetterView & { status: "dead_letter"; timeline: TimelineEntry[] });

/**
 * The status of `row` as operators read it at `now` (the database clock, as a claim decides what
 * is due): a queued row due after `now` is `scheduled`.
 */
export function listStatus(row: Pick<JobRow, "status" | "scheduledAt">, now: Date): JobListStatus {
  return row.status === "queued" && row.scheduledAt.getTime() > now.getTime()
    ? "scheduled"
    : row.status;
}

/** Builds a {@link JobListView} (a list row: no result) as read at `now` (database clock). */
export function jobListView(row: JobListItem, now: Date): JobListView {
  const { cancelRequestedAt, progress, progressMessage, progressAt, ...job } = row;
  return {
    ...job,
    status: listStatus(job, now),
    args: parsed(job.args),
    cancelRequestedAt,
    progress:
      progress === null ? null : { fraction: progress, message: progressMessage, at: progressAt },
  };
}

/** Builds a {@link JobView} (one job: its result parsed) as read at `now` (database clock). */
export function jobView(row: JobDetailRow, now: Date): JobView {
  const { result, ...listed } = row;
  return { ...jobListView(listed, now), result: parsed(result) };
}

/** Builds a {@link DeadLetterView}. */
export function deadLetterView(row: DeadLetterRow): DeadLetterView {
  return { ...row, args: parsed(row.args) };
}

function fromEvent(e: JobEvent): TimelineEntry {
  return { at: e.at, kind: e.kind, attempt: e.attempt, workerId: e.workerId, detail: e.detail };
}

/**
 * The timeline of a job or dead letter: enqueued (created_at), the stored events, the current or
 * last start (started_at) and, for a done row, its finish — in time order (stable).
 */
export function timeline(
  row: Pick<JobRow, "createdAt" | "startedAt" | "finishedAt" | "attempts" | "workerId"> & {
    status: JobListStatus | "dead_letter";
  },
  events: readonly JobEvent[],
): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    { at: row.createdAt, kind: "enqueued", attempt: null, workerId: null, detail: null },
  ];
  // The start goes before the events, so an event in the same millisecond sorts after it.
  if (row.startedAt !== null) {
    const attempt = row.status === "processing" ? row.attempts + 1 : Math.max(row.attempts, 1);
    entries.push({
      at: row.startedAt,
      kind: "started",
      attempt,
      workerId: row.workerId,
      detail: row.status === "processing" ? "running now" : "last start",
    });
  }
  entries.push(...events.map(fromEvent));
  if (row.status === "done" && row.finishedAt !== null) {
    entries.push({
      at: row.finishedAt,
      kind: "done",
      attempt: row.attempts,
      workerId: row.workerId,
      detail: null,
    });
  }
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => a.entry.at.getTime() - b.entry.at.getTime() || a.index - b.index)
    .map(({ entry }) => entry);
}
