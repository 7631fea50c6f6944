/**
 * Shared set-up for real-process tests: a fresh store per test of each kind another process
 * reaches (test-backends.ts: a SQLite file, PostgreSQL), the `soniq setup` run, an inspecting
 * Soniq instance, and `soniq worker` on the e2e fixture module.
 */
import { pino } from "pino";
import { Soniq } from "../../src/index.js";
import { startCli } from "./cli.js";
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

/**
 * A fresh store, set up, with fast polling and heartbeats, plus `extra` variables. The set-up is
 * the inspector's `setup()` — what `soniq setup` runs (src/cli/commands/setup.ts), without a
 * process of its own: a `soniq` start costs about 0.7 s of CPU, and about a hundred tests
 * prepare a store. The `soniq setup` command itself is tested in cli-database-url.test.ts and
 * json-outputs.test.ts.
 */
export async function prepared(target: Target, extra: Record<string, string> = {}) {
  const env = {
    ...target.fresh(),
    SONIQ_POLL_INTERVAL: "0.1",
    SONIQ_HEARTBEAT_INTERVAL: "0.5",
    ...extra,
  };
  const db = inspector(env);
  await db.setup();
  return { env, db };
}

/**
 * Longest wait for a worker's "worker started", in milliseconds. It only has to catch a worker
 * that never starts (one that exits first fails at once). A start costs about 1.5 s of CPU (Node,
 * the CLI, tsx and the fixture module: 1.17 s user + 0.30 s system measured), so on a 2-core
 * machine at load average L it takes about 0.75 × L seconds: 12.5 s was measured at load 15, and
 * the former 20 s bound was exceeded at load 35 (the whole suite beside other work). 45 s covers
 * load 60 and stays under the 60 s test timeout, so a failure names the start, not the test.
 */
export const WORKER_READY_TIMEOUT_MS = 45_000;

/**
 * `soniq worker` on the fixture; `ready` resolves once it logged "worker started", and rejects at
 * once (with its stderr) if it exits before that.
 */
export function startWorker(env: Record<string, string>, args: string[] = []) {
  const worker = startCli(["worker", FIXTURE, ...args], env);
  const started = () => worker.stderr().includes("worker started");
  const ready = Promise.race([
    waitFor(started, WORKER_READY_TIMEOUT_MS, "worker started"),
    worker.exited.then((exit) => {
      if (started()) return true;
      throw new Error(
        `the worker exited (${exit.signal ?? exit.code}) before it started:\n${exit.stderr}`,
      );
    }),
  ]);
  // A test that does not wait for the start (the worker is meant to die) leaves no unhandled
  // rejection behind; one that awaits `ready` still sees the failure.
  ready.catch(() => undefined);
  return { ...worker, ready };
}
