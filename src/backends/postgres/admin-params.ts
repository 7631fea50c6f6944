/**
 * Parameters and rows of the PostgreSQL operations statements (sql.ts `buildAdminStatements`):
 * the contract's filters as positional parameters (NULL when not given), and listed rows as
 * `JobListItem`s.
 */
import type { DeadLetterFilter, JobFilter, JobListItem } from "../contract/index.js";
import { isUuid } from "./identifiers.js";
import { type RawJobRow, toJobRow } from "./rows.js";

export type RawListedJob = RawJobRow & {
  cancel_requested_at: Date | null;
  progress: number | null;
  progress_message: string | null;
  progress_at: Date | null;
  cursor_us: string;
};

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

export function toListed(row: RawListedJob): JobListItem {
  return {
    ...toJobRow(row),
    cancelRequestedAt: row.cancel_requested_at,
    progress: row.progress,
    progressMessage: row.progress_message,
    progressAt: row.progress_at,
  };
}
