/**
 * Global setup of the `pgbouncer` test project (vitest.config.ts): starts one PgBouncer in
 * transaction mode (test/helpers/pgbouncer.ts) for the whole run and provides its URL to the test
 * files as `pgbouncerUrl` (`inject("pgbouncerUrl")`), so describeEachBackend (backend-targets.ts)
 * runs the worker suite's PostgreSQL cases through it. `null` when PostgreSQL or the binary is
 * missing: the suites then skip loudly (a failure under `TEST_REQUIRE_POSTGRES=1`).
 */
import { existsSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { PGBOUNCER_BIN, type PgBouncer, startPgBouncer } from "./pgbouncer-process.js";
import { postgresAvailable, TEST_DATABASE_URL } from "./postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The pooler's URL in the `pgbouncer` project; absent in the default project. */
    pgbouncerUrl: string | null;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let bouncer: PgBouncer | undefined;
  if ((await postgresAvailable()) && existsSync(PGBOUNCER_BIN)) {
    // Worker tests open several pools of up to 4 connections each, some holding a transaction
    // while another statement waits: room for all of them on the server side.
    bouncer = await startPgBouncer({ target: TEST_DATABASE_URL, poolSize: 40 });
  }
  project.provide("pgbouncerUrl", bouncer?.url ?? null);
  return async () => {
    await bouncer?.stop();
  };
}
