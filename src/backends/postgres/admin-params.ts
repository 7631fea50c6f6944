/**
 * Parameters and rows of the PostgreSQL operations statements (sql.ts `buildAdminStatements`):
 * the contract's filters as positional parameters (NULL when not given), and the shapes of the
 * listed and the one-job rows (mapped by rows.ts `toListed`, `toDetailed`).
 */
import type { DeadLetterFilter, JobFilter } from "../contract/index.js";
import { isUuid } from "./identifiers.js";
import type { RawControls, RawJobListRow, RawJobRow } from "./rows.js";

/** A `jobList` row: the job without its result, its controls and its cursor (rows.ts `toListed`). */
export type RawListedJob = RawJobListRow & RawControls & { cursor_us: string };

/** A `jobGet` row: the whole job and its controls (rows.ts `toDetailed`). */
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
