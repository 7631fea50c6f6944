/**
 * The memory operations store's filters and pages (contract: admin-store.ts `JobFilter`,
 * `DeadLetterFilter`, `Page`): the same matching rules the SQL catalogues apply.
 */
import type {
  DeadLetterFilter,
  DeadLetterRow,
  JobFilter,
  JobRow,
  Page,
} from "../contract/index.js";
import { decodeCursor, encodeCursor } from "../shared/cursor.js";

/** The value at `path` in `args` JSON, as text the way PostgreSQL's `->>` gives it; undefined if absent. */
function argsAt(args: string, path: readonly string[]): string | undefined {
  let value: unknown = JSON.parse(args);
  for (const key of path) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  if (value === undefined || value === null) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}

function within(date: Date | null, after?: Date, before?: Date): boolean {
  if (after === undefined && before === undefined) return true;
  if (date === null) return false;
  return (
    (after === undefined || date.getTime() >= after.getTime()) &&
    (before === undefined || date.getTime() < before.getTime())
  );
}

export function matchesJob(row: JobRow, f: JobFilter): boolean {
  return (
    (f.status === undefined || f.status.includes(row.status)) &&
    (f.queue === undefined || f.queue.includes(row.queue)) &&
    (f.name === undefined || f.name.includes(row.name)) &&
    (f.ids === undefined || f.ids.includes(row.id)) &&
    (f.dedupKey === undefined || row.dedupKey === f.dedupKey) &&
    (f.errorContains === undefined || (row.lastError ?? "").includes(f.errorContains)) &&
    (f.args === undefined || argsAt(row.args, f.args.path) === f.args.value) &&
    within(row.createdAt, f.createdAfter, f.createdBefore) &&
    within(row.finishedAt, f.finishedAfter, f.finishedBefore)
  );
}

export function matchesDead(row: DeadLetterRow, f: DeadLetterFilter): boolean {
  return (
    (f.reason === undefined || f.reason.includes(row.reason)) &&
    (f.queue === undefined || f.queue.includes(row.queue)) &&
    (f.name === undefined || f.name.includes(row.name)) &&
    (f.ids === undefined || f.ids.includes(row.id)) &&
    within(row.deadAt, f.deadAfter, f.deadBefore)
  );
}

/** Newest first by `time`, then id descending; one page after `cursor`. */
export function page<T extends { id: string }>(
  rows: T[],
  time: (row: T) => number,
  cursorText: string | null | undefined,
  limit: number,
): Page<T> {
  const cursor = decodeCursor(cursorText);
  const sorted = rows.sort((a, b) => time(b) - time(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const after = cursor
    ? sorted.filter((r) => {
        const t = time(r);
        const ct = Number(cursor.time);
        return t < ct || (t === ct && r.id < cursor.id);
      })
    : sorted;
  const items = after.slice(0, limit);
  const last = after.length > limit ? items.at(-1) : undefined;
  return {
    items,
    nextCursor: last ? encodeCursor({ time: String(time(last)), id: last.id }) : null,
  };
}
