/**
 * Shared set-up for real-process tests: a fresh store per test of each kind another process
 * reaches (test-backends.ts: a SQLite file, PostgreSQL), the `soniq setup` run, an inspecting
 * Soniq instance, and `soniq worker` on the e2e fixture module.
 */
import { pino } from "pino";
import { expect } from "vitest";
import { Soniq } from "../../src/index.js";
import { runCli, startCli } from "./cli.js";
import {
  availableKinds,
  type BackendKind,
  SHARED_KINDS,
  storeEnv,
  useBackends,
} from "./test-backends.js";
import { waitFor } from "./wait.js";

/** The jobs module the real-process tests run (`test/fixtures/e2e-jobs.ts`). */
export const FIXTURE = "test/fixtures/e2e-jobs.ts";

const available = await availableKinds(SHARED_KINDS);

export interface Target {
  /** The kind of store (test-backends.ts). */
  label: BackendKind;
  skip: boolean;
  /** SONIQ_* variables for a fresh, isolated store (not set up). */
  fresh(): Record<string, string>;
}

/** One target per kind another process reaches (PostgreSQL skipped loudly when unreachable). */
export const targets: Target[] = SHARED_KINDS.map((kind) => {
  const stores = useBackends(kind, { schemaPrefix: "soniq_e2e" });
  return {
    label: kind,
    skip: !available.has(kind),
    fresh: () => storeEnv(stores.freshAddress()),
  };
});

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
