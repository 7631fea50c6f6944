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

/**
 * `text` with U+0000 as U+FFFD: PostgreSQL text cannot hold U+0000 (a parameter carrying one is
 * refused), and the `args` filter reads stored arguments with the same mapping (sql.ts
 * `ARGS_WITHOUT_NUL`). No stored name, queue, key or error text holds U+0000.
 */
export function withoutNul(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "\ufffd") : text;
}

function texts(list: readonly string[] | undefined): string[] | null {
  return list ? list.map(withoutNul) : null;
}

function text(value: string | undefined): string | null {
  return value === undefined ? null : withoutNul(value);
}

export function jobFilterParams(f: JobFilter): unknown[] {
  return [
    texts(f.status),
    texts(f.queue),
    texts(f.name),
    uuids(f.ids),
    text(f.dedupKey),
    text(f.errorContains),
    texts(f.args?.path),
    text(f.args?.value),
    f.createdAfter ?? null,
    f.createdBefore ?? null,
    f.finishedAfter ?? null,
    f.finishedBefore ?? null,
  ];
}

export function deadFilterParams(f: DeadLetterFilter): unknown[] {
  return [
    texts(f.reason),
    texts(f.queue),
    texts(f.name),
    uuids(f.ids),
    f.deadAfter ?? null,
    f.deadBefore ?? null,
  ];
}
