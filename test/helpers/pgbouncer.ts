/**
 * A real PgBouncer in transaction mode in front of the test server, for the suites that run
 * through one (test/contract/pgbouncer.test.ts, test/worker/pgbouncer.test.ts): started on a free
 * port from a temporary pgbouncer.ini, stopped after. Debian's `pgbouncer` package provides the
 * binary (`.ci/run` installs it); without it the suites skip loudly, or fail when
 * `TEST_REQUIRE_POSTGRES=1`.
 */
import { existsSync } from "node:fs";
import { describe } from "vitest";
import {
  PGBOUNCER_BIN,
  type PgBouncerOptions,
  startPgBouncer as start,
} from "./pgbouncer-process.js";
import { POSTGRES_REQUIRED, TEST_DATABASE_URL } from "./postgres.js";
import { POSTGRES_UP } from "./postgres-suite.js";
import { tempDir } from "./temp.js";

export { PGBOUNCER_BIN, type PgBouncer, type PgBouncerOptions } from "./pgbouncer-process.js";

/**
 * Starts PgBouncer (transaction mode) in front of the test database, its ini file in a test
 * temporary directory (pgbouncer-process.ts).
 */
export function startPgBouncer(options: PgBouncerOptions = {}) {
  return start({ target: TEST_DATABASE_URL, dir: tempDir(), ...options });
}

/**
 * Whether the binary is there. Warns loudly when not; throws instead when
 * `TEST_REQUIRE_POSTGRES=1` (CI installs it).
 */
export function pgbouncerAvailable(): boolean {
  if (existsSync(PGBOUNCER_BIN)) return true;
  const message = `PgBouncer is not installed at ${PGBOUNCER_BIN} (apt-get install pgbouncer)`;
  if (POSTGRES_REQUIRED) throw new Error(`TEST_REQUIRE_POSTGRES=1 but ${message}`);
  console.warn(`\n!!!!!!!!\n!!! SKIPPING PgBouncer tests: ${message}.\n!!!!!!!!\n`);
  return false;
}

/**
 * A describe block that runs only when PostgreSQL answers and PgBouncer is installed (skipped
 * loudly otherwise; a failure when `TEST_REQUIRE_POSTGRES=1`).
 */
export function describePgBouncer(name: string, fn: () => void): void {
  describe.skipIf(!(POSTGRES_UP && pgbouncerAvailable()))(name, fn);
}
