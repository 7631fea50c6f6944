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
export interface JobListView
  extends Omit<JobRow, "args" | "result" | "status" | "checkpoint" | "steps"> {
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

/**
 * One job as the admin API shows it (`soniq.jobs.get`): a {@link JobListView} plus its result,
 * its checkpoint and its steps (docs/checkpoints.md).
 */
export interface JobView extends JobListView {
  /** The handler's return value (parsed JSON), when `done`; null otherwise. */
  result: unknown;
  /** Its checkpoint (`ctx.checkpoint`), or null when it has none. */
  checkpoint: CheckpointView | null;
  /** Its durable steps (`ctx.step`) in the order they were recorded; empty when none. */
  steps: StepView[];
}

/** A job's checkpoint as the admin API shows it (docs/checkpoints.md, "Seeing it"). */
export interface CheckpointView {
  /**
   * Checkpoints written for the job, over all its attempts (since it was enqueued, run again or
   * its checkpoint cleared). Writes coalesce: calls made while a write was in flight count once.
   */
  count: number;
  /** When the last one was written (database clock); null when not recorded. */
  at: Date | null;
  /** The stored state's size: UTF-8 bytes of its JSON text. */
  bytes: number;
  /** The state (parsed JSON): what the next attempt reads as `ctx.resume`. */
  value: unknown;
}

/**
 * A durable step's state: `done` (its result is stored; never run again), `running` (an effect
 * step was started and has not ended: its outcome is unknown if the attempt ended), `frozen` (an
 * effect step whose outcome is unknown: the job waits for an operator's answer).
 */
export type StepState = "running" | "done" | "frozen";

/** One durable step of a job (docs/checkpoints.md). */
export interface StepView {
  name: string;
  state: StepState;
  /**
   * When it reached that state, by the clock of the worker (or the operator's process) that
   * recorded it; null when not recorded.
   */
  at: Date | null;
}

/** A dead-letter entry as the admin API shows it. */
export interface DeadLetterView extends Omit<DeadLetterRow, "args"> {
  args: unknown;
}

/** Kinds of timeline entries: the row's own milestones plus the stored events. */
export type TimelineKind = "enqueued" | "started" | "done" | "checkpoint" | "step" | JobEventKind;

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
  const {
    cancelRequestedAt,
    progress,
    progressMessage,
    progressAt,
    checkpoint: _checkpoint,
    steps: _steps,
    ...job
  } = row as JobListItem & Pick<JobRow, "checkpoint" | "steps">;
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
  return {
    ...jobListView(listed, now),
    result: parsed(result),
    checkpoint: checkpointView(row),
    steps: stepViews(row.steps ?? null),
  };
}

/** A date from epoch ms, or null for anything that is not a finite number. */
function epochDate(value: unknown): Date | null {
  return typeof value === "number" && Number.isFinite(value) ? new Date(value) : null;
}

/**
 * The {@link CheckpointView} of a row: the state from `checkpoint`, its count and time from
 * `meta` (`checkpoints`, `checkpointAt`, written by the checkpoint's own update).
 */
export function checkpointView(row: Pick<JobRow, "checkpoint" | "meta">): CheckpointView | null {
  const text = row.checkpoint ?? null;
  if (text === null) return null;
  const meta = parsed(row.meta);
  const m = meta !== null && typeof meta === "object" ? (meta as Record<string, unknown>) : {};
  const count = typeof m.checkpoints === "number" ? m.checkpoints : 1;
  return {
    count,
    at: epochDate(m.checkpointAt),
    bytes: Buffer.byteLength(text, "utf8"),
    value: parsed(text),
  };
}

/** The {@link StepView}s of a row's steps' records (JSON text); unreadable text shows none. */
export function stepViews(text: string | null): StepView[] {
  const records = parsed(text);
  if (records === null || typeof records !== "object" || Array.isArray(records)) return [];
  const views: StepView[] = [];
  for (const [name, record] of Object.entries(records as Record<string, unknown>)) {
    const r = record as { s?: unknown; t?: unknown } | null;
    const state = r?.s;
    if (state !== "running" && state !== "done" && state !== "frozen") continue;
    views.push({ name, state, at: epochDate(r?.t) });
  }
  return views;
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
  resume: { checkpoint: CheckpointView | null; steps: readonly StepView[] } = {
    checkpoint: null,
    steps: [],
  },
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
  // Checkpoints and steps are read from the row (no event per write): one entry for the last
  // checkpoint, one per step in its current state.
  const cp = resume.checkpoint;
  if (cp?.at) {
    entries.push({
      at: cp.at,
      kind: "checkpoint",
      attempt: null,
      workerId: null,
      detail: `last of ${cp.count} checkpoint${cp.count === 1 ? "" : "s"}, ${cp.bytes} bytes`,
    });
  }
  for (const step of resume.steps) {
    if (step.at === null) continue;
    entries.push({
      at: step.at,
      kind: "step",
      attempt: null,
      workerId: null,
      detail: `${step.name}: ${step.state}`,
    });
  }
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
