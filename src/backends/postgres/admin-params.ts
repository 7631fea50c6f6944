/**
 * Parameters and rows of the PostgreSQL operations statements (sql.ts `buildAdminStatements`):
 * the contract's filters as positional parameters (NULL when not given), listed rows as
 * `JobListItem`s (no result) and the one-job row as a `JobDetailRow`.
 */
import type {
  DeadLetterFilter,
  JobControls,
  JobDetailRow,
  JobFilter,
  JobListItem,
} from "../contract/index.js";
import { isUuid } from "./identifiers.js";
import { type RawJobListRow, type RawJobRow, toJobListRow, toJobRow } from "./rows.js";

/** The controls columns of a listed or detailed job (`CONTROL_COLUMNS`). */
interface RawControls {
  cancel_requested_at: Date | null;
  progress: number | null;
  progress_message: string | null;
  progress_at: Date | null;
}

/** A `jobList` row: the job without its result, its controls and its cursor. */
export type RawListedJob = RawJobListRow & RawControls & { cursor_us: string };

/** A `jobGet` row: the whole job and its controls. */
export type RawDetailedJob = RawJobRow & RawControls;

/** Only UUIDs can match: the others are dropped (a list of none matches nothing). */
export function uuids(ids: readonly string[] | undefined): string[] | null {
  return ids === undefined ? null : ids.filter(isUuid);
}

export function jobFilterParams(f: JobFilter): unknown[] {
  return [
    f.status ? [...f.status] : null,
    f.queue ? [...f.queue] : null,
    f.name ? [...f.name] : null,
    uuids(f.ids),
    f.dedupKey ?? null,
    f.errorContains ?? null,
    f.args ? [...f.args.path] : null,
    f.args ? f.args.value : null,
    f.createdAfter ?? null,
    f.createdBefore ?? null,
    f.finishedAfter ?? null,
    f.finishedBefore ?? null,
  ];
}

export function deadFilterParams(f: DeadLetterFilter): unknown[] {
  return [
    f.reason ? [...f.reason] : null,
    f.queue ? [...f.queue] : null,
    f.name ? [...f.name] : null,
    uuids(f.ids),
    f.deadAfter ?? null,
    f.deadBefore ?? null,
  ];
}

function toControls(row: RawControls): JobControls {
  return {
    cancelRequestedAt: row.cancel_requested_at,
    progress: row.progress,
    progressMessage: row.progress_message,
    progressAt: row.progress_at,
  };
}

/** Maps a `jobList` row (no result). */
export function toListed(row: RawListedJob): JobListItem {
  return { ...toJobListRow(row), ...toControls(row) };
}

/** Maps a `jobGet` row (result included). */
export function toDetailed(row: RawDetailedJob): JobDetailRow {
  return { ...toJobRow(row), ...toControls(row) };
}
