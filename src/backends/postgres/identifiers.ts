/**
 * Names derived from the configured PostgreSQL schema: the validated schema itself, the
 * quoted table names runtime SQL uses, the LISTEN/NOTIFY channel and the migration lock key.
 */
import { createHash } from "node:crypto";
import { SoniqError } from "../../errors.js";

/** What a schema name must look like: lower-case, unquoted-safe, at most 63 bytes. */
export const SCHEMA_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Returns `schema` when it matches {@link SCHEMA_NAME_PATTERN}.
 * @throws SoniqError `INVALID_OPTION` otherwise.
 */
export function validateSchemaName(schema: string): string {
  if (typeof schema !== "string" || !SCHEMA_NAME_PATTERN.test(schema)) {
    throw new SoniqError(
      "INVALID_OPTION",
      `schema ${JSON.stringify(schema)} must match ${String(SCHEMA_NAME_PATTERN)}`,
      { details: { option: "schema" } },
    );
  }
  return schema;
}

/** `"name"`: an identifier quoted for SQL. Only used on names validated above. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** PostgreSQL's identifier limit (NAMEDATALEN - 1), which also bounds channel names. */
const MAX_IDENTIFIER_BYTES = 63;

/**
 * The NOTIFY channel of a schema: `soniq_<schema>`, or `soniq_<md5(schema)>` when that would
 * exceed 63 bytes. Must stay identical to the expression in the insert trigger of
 * `migrations/001_initial.sql`, which derives it from `TG_TABLE_SCHEMA`.
 */
export function notifyChannel(schema: string): string {
  const plain = `soniq_${schema}`;
  if (Buffer.byteLength(plain) <= MAX_IDENTIFIER_BYTES) return plain;
  return `soniq_${createHash("md5").update(schema).digest("hex")}`;
}

/**
 * The `pg_advisory_xact_lock` key that serialises migrations of one schema across processes:
 * a signed 64-bit integer, as a decimal string for a `$n::bigint` parameter.
 */
export function migrationLockKey(schema: string): string {
  const digest = createHash("sha256").update(`soniq:migrate:${schema}`).digest();
  return digest.readBigInt64BE(0).toString();
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is a UUID in the canonical 8-4-4-4-12 form (so a `::uuid` cast cannot fail). */
export function isUuid(value: string): boolean {
  return typeof value === "string" && UUID_PATTERN.test(value);
}
