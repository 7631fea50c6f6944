/**
 * The admin API's filter input (what `soniq.jobs.list` and `soniq.deadLetters.list` accept,
 * friendly to callers and the CLI) checked and turned into the contract's filters
 * (admin-store.ts `JobFilter`, `DeadLetterFilter`). Bad input is a `SoniqError("INVALID_OPTION")`
 * naming the field; nothing reaches the database.
 */
import type { DeadLetterFilter, JobFilter, JobListStatus } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import { valueText } from "../value-text.js";

/** One value or several (any of them matches). */
export type OneOrMany<T> = T | readonly T[];

/** An instant: a `Date`, or ISO 8601 text with a zone (`2026-12-01T09:00:00Z`). */
export type Instant = Date | string;

/** Filters of `soniq.jobs.list` / `count` / `bulk`: every given field must match. */
export interface JobQuery {
  /**
   * `queued` (due now: its due time has come, by the database clock), `scheduled` (queued, due
   * later), `processing`, `done` or `cancelled`. `["queued", "scheduled"]` is every waiting job.
   */
  status?: OneOrMany<JobListStatus>;
  queue?: OneOrMany<string>;
  name?: OneOrMany<string>;
  /** Job ids. */
  id?: OneOrMany<string>;
  dedupKey?: string;
  /** `last_error` contains this text. */
  error?: string;
  /**
   * The arguments at a path equal a value: `{ path: "user.id", equals: 42 }` matches
   * `{"user":{"id":42}}` (compared as text, so `"42"` matches too). Works whatever the stored
   * arguments hold; on PostgreSQL, whose text cannot hold U+0000, U+0000 compares as U+FFFD.
   */
  args?: { path: string | readonly string[]; equals: string | number | boolean };
  createdAfter?: Instant;
  createdBefore?: Instant;
  finishedAfter?: Instant;
  finishedBefore?: Instant;
}

/** Filters of `soniq.deadLetters.list` / `count` / bulk actions. */
export interface DeadLetterQuery {
  /** `max_attempts_exceeded`, `crash_loop`, `unknown_job`, `invalid_args`, … */
  reason?: OneOrMany<string>;
  queue?: OneOrMany<string>;
  name?: OneOrMany<string>;
  id?: OneOrMany<string>;
  deadAfter?: Instant;
  deadBefore?: Instant;
}

/** Page options of the lists. */
export interface PageOptions {
  /** From the previous page's `nextCursor`. */
  cursor?: string | null;
  /** Rows per page, 1–1000. Default 50. */
  limit?: number;
}

const STATUSES: readonly JobListStatus[] = [
  "queued",
  "scheduled",
  "processing",
  "done",
  "cancelled",
];
const JOB_KEYS = new Set([
  "status",
  "queue",
  "name",
  "id",
  "dedupKey",
  "error",
  "args",
  "createdAfter",
  "createdBefore",
  "finishedAfter",
  "finishedBefore",
]);
const PAGE_KEYS = new Set(["cursor", "limit"]);
const DEAD_KEYS = new Set(["reason", "queue", "name", "id", "deadAfter", "deadBefore"]);

function bad(field: string, message: string): SoniqError {
  return new SoniqError("INVALID_OPTION", `${field}: ${message}`, { details: { option: field } });
}

function unknownKeys(query: object, known: Set<string>): void {
  if (typeof query !== "object" || query === null || Array.isArray(query)) {
    throw bad("filter", "must be an object of filter fields");
  }
  const unknown = Object.keys(query).filter((k) => !known.has(k));
  if (unknown.length > 0) {
    throw bad(unknown[0] as string, `unknown filter (known: ${[...known].join(", ")})`);
  }
}

function texts(field: string, value: OneOrMany<string> | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" && !Array.isArray(value)) {
    throw bad(field, "must be non-empty text or a list of it");
  }
  const list: unknown[] = typeof value === "string" ? [value] : [...value];
  for (const item of list) {
    if (typeof item !== "string" || item.length === 0) throw bad(field, "must be non-empty text");
  }
  return list as string[];
}

/**
 * An instant from a `Date` or ISO 8601 text with a zone, in the years 1 to 9999.
 * @throws SoniqError `INVALID_OPTION`.
 */
export function instant(field: string, value: Instant | undefined): Date | undefined {
  if (value === undefined) return undefined;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw bad(field, "is an invalid Date");
    return inRange(field, value);
  }
  if (typeof value !== "string" || !/(Z|[+-]\d\d:?\d\d)$/i.test(value.trim())) {
    throw bad(field, `must be a Date or ISO 8601 text with a zone, got ${JSON.stringify(value)}`);
  }
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw bad(field, `is not a valid instant: ${value}`);
  return inRange(field, date);
}

/** The instants a filter takes: years 1 to 9999 (every store's timestamps hold them). */
const MIN_INSTANT = Date.parse("0001-01-01T00:00:00Z");
const MAX_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");

function inRange(field: string, date: Date): Date {
  if (date.getTime() < MIN_INSTANT || date.getTime() > MAX_INSTANT) {
    throw bad(field, `${date.toISOString()} is outside 0001-01-01 .. 9999-12-31`);
  }
  return date;
}

/** @throws SoniqError `INVALID_OPTION` for unknown fields and bad values. */
export function toJobFilter(query: JobQuery = {}): JobFilter {
  unknownKeys(query, JOB_KEYS);
  const filter: JobFilter = {};
  const status = texts("status", query.status);
  if (status) {
    for (const s of status) {
      if (!STATUSES.includes(s as JobListStatus)) {
        throw bad("status", `${JSON.stringify(s)} is not one of ${STATUSES.join(", ")}`);
      }
    }
    filter.status = status as JobListStatus[];
  }
  const queue = texts("queue", query.queue);
  if (queue) filter.queue = queue;
  const name = texts("name", query.name);
  if (name) filter.name = name;
  const ids = texts("id", query.id);
  if (ids) filter.ids = ids;
  if (query.dedupKey !== undefined)
    filter.dedupKey = texts("dedupKey", query.dedupKey)?.[0] as string;
  if (query.error !== undefined) filter.errorContains = texts("error", query.error)?.[0] as string;
  if (query.args !== undefined) {
    if (typeof query.args !== "object" || query.args === null) {
      throw bad("args", "must be { path, equals }");
    }
    const { path, equals } = query.args;
    if (typeof path !== "string" && !Array.isArray(path)) {
      throw bad("args.path", "must be dotted keys such as user.id");
    }
    const keys: unknown[] = typeof path === "string" ? path.split(".") : [...path];
    if (keys.length === 0 || keys.some((k) => typeof k !== "string" || k.length === 0)) {
      throw bad("args.path", "must be dotted keys such as user.id");
    }
    if (!["string", "number", "boolean"].includes(typeof equals)) {
      throw bad("args.equals", "must be text, a number or a boolean");
    }
    filter.args = { path: keys as string[], value: String(equals) };
  }
  const dates = {
    createdAfter: instant("createdAfter", query.createdAfter),
    createdBefore: instant("createdBefore", query.createdBefore),
    finishedAfter: instant("finishedAfter", query.finishedAfter),
    finishedBefore: instant("finishedBefore", query.finishedBefore),
  };
  for (const [key, value] of Object.entries(dates)) {
    if (value) (filter as Record<string, unknown>)[key] = value;
  }
  return filter;
}

/** @throws SoniqError `INVALID_OPTION` for unknown fields and bad values. */
export function toDeadLetterFilter(query: DeadLetterQuery = {}): DeadLetterFilter {
  unknownKeys(query, DEAD_KEYS);
  const filter: DeadLetterFilter = {};
  const reason = texts("reason", query.reason);
  if (reason) filter.reason = reason;
  const queue = texts("queue", query.queue);
  if (queue) filter.queue = queue;
  const name = texts("name", query.name);
  if (name) filter.name = name;
  const ids = texts("id", query.id);
  if (ids) filter.ids = ids;
  const after = instant("deadAfter", query.deadAfter);
  if (after) filter.deadAfter = after;
  const before = instant("deadBefore", query.deadBefore);
  if (before) filter.deadBefore = before;
  return filter;
}

/**
 * Checked page options: the cursor (text from a previous page, or null) and the page size.
 * @throws SoniqError `INVALID_OPTION` for page options that are not an object, an unknown key, a
 * cursor that is not text, or a bad limit.
 */
export function toPage(page: PageOptions | undefined): { cursor: string | null; limit: number } {
  if (page === undefined) return { cursor: null, limit: 50 };
  if (typeof page !== "object" || page === null || Array.isArray(page)) {
    throw bad("page", "must be { cursor?, limit? }");
  }
  unknownKeys(page, PAGE_KEYS);
  const cursor = page.cursor ?? null;
  if (cursor !== null && typeof cursor !== "string") {
    throw bad("cursor", "must be the nextCursor text of a previous page");
  }
  return { cursor, limit: pageLimit(page.limit) };
}

/**
 * The page size: 1–1000, default 50.
 * @throws SoniqError `INVALID_OPTION`.
 */
export function pageLimit(limit: number | undefined, fallback = 50): number {
  if (limit === undefined) return fallback;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw bad("limit", `must be an integer from 1 to 1000, got ${valueText(limit)}`);
  }
  return limit;
}
