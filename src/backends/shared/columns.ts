/**
 * The one column catalogue of both engines (docs/backends.md, "SQL and migrations, for
 * reviewers"): each column a contract row carries is named here once, keyed by its contract field
 * and in table order, with how its stored value decodes. Each engine builds its select lists
 * ({@link selectList}) and its row mappers ({@link mappersFor}) from it, so a new column is one
 * entry here plus each engine's migration. Kinds:
 *
 * - `text`: text on both engines.
 * - `uuid`: `uuid` on PostgreSQL (selected `::text`), TEXT on SQLite.
 * - `json`: `json` on PostgreSQL (selected `::text`: the exact text written), TEXT on SQLite.
 * - `number`: a number on both (`integer` or `double precision`; INTEGER or REAL).
 * - `bool`: `boolean` on PostgreSQL, INTEGER 0/1 on SQLite.
 * - `instant`: `timestamptz` on PostgreSQL (a `Date` from the driver), INTEGER epoch
 *   milliseconds on SQLite.
 * - `list`: `text[]` on PostgreSQL, a JSON array as TEXT on SQLite.
 *
 * A trailing `?` marks a column that may be NULL. A third entry `claim` marks the columns a claim
 * returns ({@link CLAIMED_FIELDS}); their mapper (claimed-job.ts `claimedJobOfRow`) is on the hot
 * path, so it is written out by hand instead of looping over this catalogue per row, and
 * test/schema/columns.test.ts holds it to the catalogue.
 */

import {
  type DeadLetterRow,
  decodeAnswer,
  type JobControls,
  type JobDetailRow,
  type JobListItem,
  type JobRow,
  type SubmissionRecord,
  type WorkerRow,
} from "../contract/index.js";
import { idempotencyKey, parsePhase } from "../contract/phases.js";

/** The two SQL engines. */
export type Engine = "postgres" | "sqlite";

type Base = "text" | "uuid" | "json" | "number" | "bool" | "instant" | "list";

/** How a column is stored (see the module comment); a trailing `?`: it may be NULL. */
export type Kind = Base | `${Base}?`;

/** The value of each kind in a contract row. */
interface Decoded {
  text: string;
  uuid: string;
  json: string;
  number: number;
  bool: boolean;
  instant: Date;
  list: readonly string[];
}

/** The value of each kind as each engine's driver returns it. */
interface Stored {
  postgres: Decoded & { list: string[] };
  sqlite: Omit<Decoded, "bool" | "instant" | "list"> & {
    bool: number;
    instant: number;
    list: string;
  };
}

/** The kinds that decode to a field of type `T` (a string field: any string kind). */
type BaseOf<T> = { [B in Base]: [T] extends [Decoded[B]] ? B : never }[Base];
type KindOf<T> = null extends T ? `${BaseOf<Exclude<T, null>>}?` : BaseOf<T>;

type Entry<K extends Kind = Kind> = readonly [column: string, kind: K, claim?: "claim"];

/** A table's catalogue: for every field of `Row`, its column and a kind that decodes to it. */
export type Columns<Row> = {
  readonly [F in keyof Row]-?: Entry<KindOf<Exclude<Row[F], undefined>>>;
};

type Table = Readonly<Record<string, Entry>>;

type StoredValue<K extends Kind, E extends Engine> = K extends `${infer B extends Base}?`
  ? Stored[E][B] | null
  : K extends Base
    ? Stored[E][K]
    : never;

/** A row of `T` as engine `E`'s driver returns it when selected with {@link selectList}. */
export type StoredRow<T extends Table, E extends Engine> = {
  [F in keyof T as T[F][0]]: StoredValue<T[F][1], E>;
};

/** `soniq_jobs`, in table order. */
export const JOBS = {
  id: ["id", "uuid", "claim"],
  name: ["name", "text", "claim"],
  queue: ["queue", "text", "claim"],
  args: ["args", "json", "claim"],
  status: ["status", "text"],
  priority: ["priority", "number", "claim"],
  attempts: ["attempts", "number", "claim"],
  maxAttempts: ["max_attempts", "number", "claim"],
  interruptions: ["interruptions", "number", "claim"],
  scheduledAt: ["scheduled_at", "instant", "claim"],
  createdAt: ["created_at", "instant", "claim"],
  updatedAt: ["updated_at", "instant"],
  startedAt: ["started_at", "instant?"],
  finishedAt: ["finished_at", "instant?"],
  workerId: ["worker_id", "text?", "claim"],
  claimToken: ["claim_token", "uuid?", "claim"],
  lastError: ["last_error", "text?"],
  result: ["result", "json?"],
  resultExpiresAt: ["result_expires_at", "instant?"],
  dedupKey: ["dedup_key", "text?"],
  meta: ["meta", "json?", "claim"],
  startKnown: ["start_known", "bool"],
  unchargedRecoveries: ["uncharged_recoveries", "number", "claim"],
  traceContext: ["trace_context", "text?", "claim"],
  version: ["version", "number", "claim"],
  checkpoint: ["checkpoint", "text?"],
  steps: ["steps", "text?"],
} as const satisfies Columns<JobRow>;

/**
 * `soniq_dead_letter_jobs`, in table order: the job columns a move copies, then why and when, then
 * the columns added since (`version`, `meta`: PostgreSQL migration 031, SQLite 021; NULL in dead
 * letters written before). The trace context is not kept there: a {@link DeadLetterRow}'s
 * `traceContext` is null.
 */
export const DEAD_LETTERS = {
  id: JOBS.id,
  name: JOBS.name,
  queue: JOBS.queue,
  args: JOBS.args,
  priority: JOBS.priority,
  attempts: JOBS.attempts,
  maxAttempts: JOBS.maxAttempts,
  interruptions: JOBS.interruptions,
  scheduledAt: JOBS.scheduledAt,
  createdAt: JOBS.createdAt,
  updatedAt: JOBS.updatedAt,
  startedAt: JOBS.startedAt,
  finishedAt: JOBS.finishedAt,
  workerId: JOBS.workerId,
  claimToken: JOBS.claimToken,
  lastError: JOBS.lastError,
  dedupKey: JOBS.dedupKey,
  reason: ["reason", "text"],
  deadAt: ["dead_at", "instant"],
  version: JOBS.version,
  meta: JOBS.meta,
} as const satisfies Columns<Omit<DeadLetterRow, "traceContext">>;

/**
 * `soniq_workers`, in table order, up to `stopped_at`: the columns a {@link WorkerRow} carries.
 * The operations columns after them are named per engine (postgres/rows.ts, sqlite/rows.ts).
 */
export const WORKERS = {
  id: ["id", "text"],
  hostname: ["hostname", "text"],
  pid: ["pid", "number"],
  queues: ["queues", "list?"],
  concurrency: ["concurrency", "number"],
  status: ["status", "text"],
  startedAt: ["started_at", "instant"],
  lastHeartbeatAt: ["last_heartbeat_at", "instant"],
  stoppedAt: ["stopped_at", "instant?"],
} as const satisfies Columns<WorkerRow>;

/** `soniq_job_controls` as a listed or detailed job shows it (selected with the alias `c`). */
export const CONTROLS = {
  cancelRequestedAt: ["cancel_requested_at", "instant?"],
  progress: ["progress", "number?"],
  progressMessage: ["progress_message", "text?"],
  progressAt: ["progress_at", "instant?"],
} as const satisfies Columns<JobControls>;

/**
 * What a submission read returns (each engine's `record` select list): the columns of
 * `soniq_remote_submissions` in table order, then its job row's status, owner, attempts and
 * error. A {@link SubmissionRecord} decodes the phase and the answer and adds the idempotency key.
 */
export const SUBMISSION_RECORDS = {
  jobId: ["job_id", "uuid"],
  name: ["job_name", "text"],
  queue: ["queue", "text"],
  phase: ["phase", "text"],
  generation: ["generation", "number"],
  taskId: ["task_id", "text?"],
  submittedAt: ["submitted_at", "instant?"],
  acceptedAt: ["accepted_at", "instant?"],
  frozenAt: ["frozen_at", "instant?"],
  frozenReason: ["frozen_reason", "text?"],
  dueAt: ["due_at", "instant?"],
  polls: ["polls", "number"],
  answer: ["answer", "text?"],
  updatedAt: ["updated_at", "instant"],
  jobStatus: ["job_status", "text?"],
  workerId: ["job_worker_id", "text?"],
  attempts: ["job_attempts", "number?"],
  lastError: ["job_last_error", "text?"],
} as const satisfies Columns<StoredSubmission>;

/** A {@link SubmissionRecord} before its phase and answer are decoded. */
type StoredSubmission = Omit<SubmissionRecord, "phase" | "answer" | "idempotencyKey"> & {
  phase: string;
  answer: string | null;
};

type JobField = keyof typeof JOBS;

/** The {@link JOBS} fields marked `claim`: a `ClaimedJob`, what a claim returns. */
export const CLAIMED_FIELDS = (Object.keys(JOBS) as JobField[]).filter(
  (field) => (JOBS[field] as Entry)[2] === "claim",
);

/**
 * The {@link JOBS} fields job lists select: all but the result, the checkpoint and the steps,
 * which may be megabytes each.
 */
export const LIST_FIELDS = (Object.keys(JOBS) as JobField[]).filter(
  (field) => field !== "result" && field !== "checkpoint" && field !== "steps",
);

/** Options of {@link selectList}. */
export interface SelectOptions<T extends Table> {
  /** The fields to select, in this order (default: every column, in table order). */
  fields?: readonly (keyof T & string)[];
  /** A table alias to qualify each column with. */
  alias?: string;
  /**
   * Select each instant as whole epoch milliseconds (PostgreSQL: `numeric`, so decimal text to
   * the driver; SQLite: the stored INTEGER), named with `_ms` for `_at` (`scheduled_at AS
   * scheduled_ms`): how a claim returns them (postgres/rows.ts `claimedColumns` says why).
   */
  instantsAsMs?: boolean;
}

/**
 * The select list of `table` for `engine`: on PostgreSQL `uuid` and `json` columns are cast to
 * text (named as the column), the others are selected as they are.
 */
export function selectList<T extends Table>(
  table: T,
  engine: Engine,
  options: SelectOptions<T> = {},
): string {
  const fields = options.fields ?? Object.keys(table);
  return fields
    .map((field) => {
      const [column, kind] = table[field] as Entry;
      const ref = options.alias === undefined ? column : `${options.alias}.${column}`;
      const base = kind.replace("?", "");
      if (base === "instant" && options.instantsAsMs) {
        const ms = column.replace(/_at$/, "_ms");
        return engine === "postgres"
          ? `floor(extract(epoch FROM ${ref}) * 1000) AS ${ms}`
          : `${ref} AS ${ms}`;
      }
      if (engine === "postgres" && (base === "uuid" || base === "json")) {
        return `${ref}::text AS ${column}`;
      }
      return ref;
    })
    .join(", ");
}

/** The column names of `table`, in table order, for an `INSERT INTO … (…)`. */
export function columnNames(table: Table): string {
  return Object.values(table)
    .map(([column]) => column)
    .join(", ");
}

const same = (value: unknown) => value;

/** How engine `engine` decodes a stored value of `kind`. */
function decoderOf(kind: Kind, engine: Engine): (value: unknown) => unknown {
  if (engine === "postgres") return same;
  switch (kind.replace("?", "")) {
    case "bool":
      return (value) => value === 1;
    case "instant":
      return (value) => (value === null ? null : new Date(value as number));
    case "list":
      return (value) => (value === null ? null : (JSON.parse(value as string) as string[]));
    default:
      return same;
  }
}

/**
 * The mapper of rows selected with {@link selectList} (the same `fields`) to `Row`: the decoders
 * are chosen once, each row then costs one pass over its fields.
 */
function rowMapper<Row>(
  table: Columns<Row> & Table,
  engine: Engine,
  fields: readonly string[] = Object.keys(table),
): (row: object) => Row {
  const steps = fields.map((field) => {
    const [column, kind] = table[field] as Entry;
    return [field, column, decoderOf(kind, engine)] as const;
  });
  return (row) => {
    const stored = row as Record<string, unknown>;
    const decoded: Record<string, unknown> = {};
    for (const [field, column, decode] of steps) decoded[field] = decode(stored[column]);
    return decoded as unknown as Row;
  };
}

/** A job row with its controls: what the one-job read and the lists select. */
const DETAILED = { ...JOBS, ...CONTROLS };

/** Engine `E`'s mappers from stored rows to the contract's rows. */
export function mappersFor<E extends Engine>(engine: E) {
  const deadLetter = rowMapper<Omit<DeadLetterRow, "traceContext">>(DEAD_LETTERS, engine);
  const submission = rowMapper<StoredSubmission>(SUBMISSION_RECORDS, engine);
  type Controls = StoredRow<typeof CONTROLS, E>;
  return {
    /** A row selected with the job columns. */
    toJobRow: rowMapper<JobRow>(JOBS, engine) as (row: StoredRow<typeof JOBS, E>) => JobRow,
    /** A row selected with the list columns ({@link LIST_FIELDS}) and the controls. */
    toListed: rowMapper<JobListItem>(DETAILED, engine, [
      ...LIST_FIELDS,
      ...Object.keys(CONTROLS),
    ]) as (row: Omit<StoredRow<typeof JOBS, E>, "result"> & Controls) => JobListItem,
    /** A row selected with the job columns and the controls. */
    toDetailed: rowMapper<JobDetailRow>(DETAILED, engine) as (
      row: StoredRow<typeof JOBS, E> & Controls,
    ) => JobDetailRow,
    /** A row selected with the dead-letter columns. */
    toDeadLetterRow: (row: StoredRow<typeof DEAD_LETTERS, E>): DeadLetterRow => ({
      ...deadLetter(row),
      traceContext: null,
    }),
    /** A row selected with the worker columns (the operations columns are left out). */
    toWorkerRow: rowMapper<WorkerRow>(WORKERS, engine) as (
      row: StoredRow<typeof WORKERS, E>,
    ) => WorkerRow,
    /** A row of a submission read. */
    toSubmissionRecord: (row: StoredRow<typeof SUBMISSION_RECORDS, E>): SubmissionRecord => {
      const record = submission(row);
      return {
        ...record,
        phase: parsePhase(record.phase),
        idempotencyKey: idempotencyKey(record.jobId, record.generation),
        answer: decodeAnswer(record.answer),
      };
    },
  };
}
