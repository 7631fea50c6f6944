/**
 * Shared set-up for real-process tests: a fresh SQLite file or PostgreSQL schema per test, the
 * `soniq setup` run, an inspecting Soniq instance, and `soniq worker` on the e2e fixture module.
 */
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, expect } from "vitest";
import { Soniq } from "../../src/index.js";
import { runCli, startCli } from "./cli.js";
import { TEST_DATABASE_URL } from "./postgres.js";
import { POSTGRES_UP, usePostgresSchemas } from "./postgres-suite.js";
import { removeTempDirs, tempDir } from "./temp.js";
import { waitFor } from "./wait.js";

/** The jobs module the real-process tests run (`test/fixtures/e2e-jobs.ts`). */
export const FIXTURE = "test/fixtures/e2e-jobs.ts";

const schemas = usePostgresSchemas("soniq_e2e");

afterAll(() => {
  removeTempDirs();
});

export interface Target {
  label: string;
  skip: boolean;
  /** SONIQ_* variables for a fresh, isolated store. */
  fresh(): Record<string, string>;
}

/** SQLite file and PostgreSQL (skipped loudly when unreachable, unless required). */
export const targets: Target[] = [
  {
    label: "SQLite file",
    skip: false,
    fresh: () => ({ SONIQ_DATABASE_URL: `sqlite:${join(tempDir(), "soniq.db")}` }),
  },
  {
    label: "PostgreSQL",
    skip: !POSTGRES_UP,
    fresh: () => {
      const schema = schemas.next();
      return { SONIQ_DATABASE_URL: TEST_DATABASE_URL, SONIQ_SCHEMA: schema };
    },
  },
];

/** A Soniq instance on the same store, for enqueueing and reading rows. */
export function inspector(env: Record<string, string>): Soniq {
  return new Soniq({
    databaseUrl: env.SONIQ_DATABASE_URL,
    ...(env.SONIQ_SCHEMA ? { schema: env.SONIQ_SCHEMA } : {}),
    env: {},
    logger: pino({ level: "silent" }),
    rejectUnknownJobs: false,
  });
}

/** A fresh store with `soniq setup` done, fast polling and heartbeats, plus `extra` variables. */
export async function prepared(target: Target, extra: Record<string, string> = {}) {
  const env = {
    ...target.fresh(),
    SONIQ_POLL_INTERVAL: "0.1",
    SONIQ_HEARTBEAT_INTERVAL: "0.5",
    ...extra,
  };
  const setup = await runCli(["setup"], env);
  expect(setup.code, setup.stderr).toBe(0);
  return { env, db: inspector(env) };
}

/** `soniq worker` on the fixture; `ready` resolves once it logged "worker started". */
export function startWorker(env: Record<string, string>, args: string[] = []) {
  const worker = startCli(["worker", FIXTURE, ...args], env);
  const ready = waitFor(() => worker.stderr().includes("worker started"), 20_000, "worker started");
  return { ...worker, ready };
}
