/**
 * The refusal of a worker whose build is newer than the schema it meets (docs/backends.md, "The
 * upgrade"): its statements would name tables or columns a later migration adds and fail mid-run
 * (a crashed worker's jobs never recovered), so registration refuses it before it claims anything.
 * Each engine's registration reads the newest migration recorded in `soniq_migrations` in the
 * same statement (PostgreSQL) or the same call (SQLite) and builds the error here.
 */
import { SoniqError } from "../../errors.js";

/**
 * The error a worker start gets when the schema is behind its build.
 * @param schema How the schema is named to the operator: `"soniq"` (a PostgreSQL schema, quoted by
 * the caller) or `in /path/q.db` (a SQLite file).
 * @param at The newest migration recorded in the schema's `soniq_migrations` (0 when none).
 * @param needs The newest migration of this build (the version the worker registers with).
 * @returns `SoniqError("SCHEMA_NOT_READY")` saying to run `soniq setup`; `details` holds
 * `{ schemaVersion: at, requiredVersion: needs }`.
 */
export function schemaBehindError(schema: string, at: number, needs: number): SoniqError {
  return new SoniqError(
    "SCHEMA_NOT_READY",
    `the database schema ${schema} is at migration ${at}; this version of Soniq needs ${needs}: run \`soniq setup\``,
    { details: { schemaVersion: at, requiredVersion: needs } },
  );
}
