/**
 * The HTTP status of every {@link SoniqErrorCode} the dashboard can meet. Input the request got
 * wrong is a 4xx with its code; only failures of the server itself (its database, its
 * configuration, a bug) are 5xx, listed in {@link SERVER_SIDE_CODES}. The map is total: a new
 * code does not compile until it has a status here.
 */
import type { SoniqErrorCode } from "../errors.js";

const STATUS = {
  INVALID_OPTION: 400,
  INVALID_JOB_NAME: 400,
  UNKNOWN_JOB: 400,
  INVALID_ARGS: 400,
  INVALID_PAYLOAD: 400,
  INVALID_ENQUEUE_OPTION: 400,
  UNKNOWN_DEPENDENCY: 400,
  DEPENDENCY_CYCLE: 400,
  INVALID_INPUT: 400,
  INVALID_RESULT: 400,
  INVALID_SCHEDULE: 400,
  UNKNOWN_PHASE: 400,
  NOT_FOUND: 404,
  INVALID_STATE: 409,
  COUNT_MISMATCH: 409,
  DEDUP_CONFLICT: 409,
  ILLEGAL_PHASE: 409,
  DRAIN_LIMIT: 409,
  JOB_FAILED: 409,
  JOB_CANCELLED: 409,
  WAIT_TIMEOUT: 408,
  WAIT_ABORTED: 408,
  // The server's side: its backend, its configuration, its database, a bug.
  UNSUPPORTED: 501,
  SCHEMA_NOT_READY: 503,
  CLOSED: 503,
  DATABASE_UNREACHABLE: 503,
  DATABASE_NOT_FOUND: 503,
  DATABASE_AUTH: 503,
  NOT_A_DATABASE: 500,
  DATABASE_ERROR: 500,
  INVALID_DATABASE_URL: 500,
  DUPLICATE_JOB: 500,
  DUPLICATE_SCHEDULE: 500,
  WORKER_START: 500,
  MODULE_LOAD: 500,
  FILE_NOT_FOUND: 500,
  UNEXPECTED: 500,
  CLAIM_LOST: 409,
  DUPLICATE_STEP: 400,
  STEP_OUTCOME_UNKNOWN: 409,
} as const satisfies Record<SoniqErrorCode, number>;

/** The codes answered with a 5xx: failures of the server, not of the request. */
export const SERVER_SIDE_CODES: readonly SoniqErrorCode[] = (
  Object.keys(STATUS) as SoniqErrorCode[]
).filter((code) => STATUS[code] >= 500);

/** The HTTP status for `code`; 500 for a code this version does not know (another copy's). */
export function errorStatus(code: string): number {
  return Object.hasOwn(STATUS, code) ? STATUS[code as SoniqErrorCode] : 500;
}
