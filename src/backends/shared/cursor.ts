/**
 * List cursors of the admin store (contract: admin-store.ts `Page`): an opaque base64url text
 * holding the sort key of the last row of a page — its time as an integer count of the engine's
 * units (PostgreSQL microseconds, SQLite and memory milliseconds) and its id.
 */
import { SoniqError } from "../../errors.js";

/** The decoded cursor: the last row's sort time (engine units, as decimal text) and id. */
export interface Cursor {
  time: string;
  id: string;
}

/** Encodes a cursor. */
export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.time, cursor.id]), "utf8").toString("base64url");
}

/**
 * Decodes a cursor given back by a caller; null/undefined means "first page".
 * @throws SoniqError `INVALID_OPTION` when it is not a cursor a list returned.
 */
export function decodeCursor(text: string | null | undefined): Cursor | null {
  if (text === null || text === undefined || text === "") return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === "string" &&
      /^-?\d{1,20}$/.test(value[0]) &&
      typeof value[1] === "string"
    ) {
      return { time: value[0], id: value[1] };
    }
  } catch {
    // falls through to the error below
  }
  throw new SoniqError(
    "INVALID_OPTION",
    `cursor ${JSON.stringify(text)} is not one a list returned`,
    {
      details: { option: "cursor" },
    },
  );
}

/**
 * Whether `id` is a time-ordered id (UUID version 7, the version nibble at text offset 14), which
 * every job made by this version has. Job listings order these by id; older ids (version 4, from
 * a database older than time-ordered ids) list after them, by creation time (contract:
 * admin-store.ts `Page`).
 */
export function isTimeOrderedId(id: string): boolean {
  return id.charAt(14) === "7";
}
