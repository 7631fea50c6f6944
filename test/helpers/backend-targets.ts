/**
 * Runs a describe block once per suite kind of test-backends.ts — a SQLite file and
 * PostgreSQL (skipped loudly when unreachable) — each test getting a fresh, set-up, empty store
 * from `target.open()`, closed after the test.
 *
 * In the `pgbouncer` test project (vitest.config.ts) the same blocks run once more, on PostgreSQL
 * only, through the PgBouncer (transaction mode) its global setup started
 * (pgbouncer-global.ts): pools with `pooler: "transaction"`, LISTEN direct (`listenUrl`), named
 * `… on PostgreSQL through PgBouncer`.
 */
import { describe, inject } from "vitest";
import { pgbouncerAvailable } from "./pgbouncer.js";
import { TEST_DATABASE_URL } from "./postgres.js";
import { availableKinds, SUITE_KINDS, type TestBackends, useBackends } from "./test-backends.js";

/** The stores of one kind a block runs on (`open()`: a fresh, set-up, empty store). */
export type BackendTarget = TestBackends;

const available = await availableKinds(SUITE_KINDS);

/**
 * The pooler's URL in the `pgbouncer` project (null there when it could not start); undefined in
 * the default project.
 */
const pgbouncerUrl: string | null | undefined = inject("pgbouncerUrl");

/**
 * True in the `pgbouncer` project, which re-runs a worker file for its PostgreSQL cases: a block
 * that is not about PostgreSQL (a memory-only describe) skips there, as the default project
 * runs it already (`describe.skipIf(IN_PGBOUNCER_PROJECT)`).
 */
export const IN_PGBOUNCER_PROJECT = pgbouncerUrl !== undefined;

/** `fn` as one describe block per suite kind, named `${name} on ${kind}`. */
export function describeEachBackend(name: string, fn: (target: BackendTarget) => void): void {
  if (pgbouncerUrl !== undefined) {
    const url = pgbouncerUrl;
    // Loud (or a failure under TEST_REQUIRE_POSTGRES=1) when the pooler is missing.
    const runs = url !== null && available.has("PostgreSQL");
    if (url === null) pgbouncerAvailable();
    describe.skipIf(!runs)(`${name} on PostgreSQL through PgBouncer`, () => {
      fn(
        useBackends("PostgreSQL", {
          schemaPrefix: "soniq_wb",
          pooler: () => ({ url: url as string, listenUrl: TEST_DATABASE_URL }),
        }),
      );
    });
    return;
  }
  for (const kind of SUITE_KINDS) {
    describe.skipIf(!available.has(kind))(`${name} on ${kind}`, () => {
      fn(useBackends(kind, { schemaPrefix: "soniq_w" }));
    });
  }
}
