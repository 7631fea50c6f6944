/**
 * The one PostgreSQL test header: `describePostgres` (skipped loudly when the server is
 * unreachable, a failure when `TEST_REQUIRE_POSTGRES=1`) and `usePostgresSchemas` (fresh schema
 * names, every one dropped after the block; it lives with the other store makers in
 * test-backends.ts, which does not probe the server at import).
 */
import { describe } from "vitest";
import { postgresAvailable } from "./postgres.js";

export { type PostgresSchemas, usePostgresSchemas } from "./test-backends.js";

/** Whether PostgreSQL answers (decided once per test file, at import). */
export const POSTGRES_UP = await postgresAvailable();

/** A describe block that runs only when PostgreSQL answers. */
export function describePostgres(name: string, fn: () => void): void {
  describe.skipIf(!POSTGRES_UP)(name, fn);
}
