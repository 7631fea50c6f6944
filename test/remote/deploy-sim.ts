/**
 * The deploy simulation (docs/remote-jobs.md, "Verifying it"): the eight deploy cases with real
 * `soniq worker` processes on the remote-jobs fixture, the local test provider, and a SQLite file
 * or a PostgreSQL schema. Each case runs one synthetic job through a signalled worker and a
 * successor, and reports the job's final durable state and these counters: duplicate submissions
 * (POSTs beyond the first per idempotency key), orphaned task ids (tasks the provider accepted that
 * no submission row records), redelivery delay, drain duration, forced exits and frozen jobs. Used
 * by `npm run deploy-sim` and test/e2e/deploy-sim.test.ts.
 */
import { join } from "node:path";
import { pino } from "pino";
import { Soniq } from "../../src/index.js";
import { type Running, runCli, startCli } from "../helpers/cli.js";
import { freshSchema, TEST_DATABASE_URL } from "../helpers/postgres.js";
import type { RemoteProvider } from "../helpers/remote-provider.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

export const SIM_FIXTURE = "test/fixtures/remote-jobs.ts";

/** One case's report. */
export interface CaseReport {
  engine: string;
  case: string;
  /** The job's final durable state: `done`, `frozen`, … */
  final: string;
  /** POSTs beyond the first per idempotency key. */
  duplicate_submissions: number;
  /** Provider tasks that no submission row records. */
  orphaned_task_ids: number;
  /** Milliseconds from the first worker's exit to the successor's first progress on the job. */
  redelivery_delay_ms: number | null;
  /** Milliseconds from the (first) signal to the signalled worker's exit. */
  drain_duration_ms: number;
  /** Signalled workers that exited through the deadline path (code 1) or were SIGKILLed. */
  forced_exits: number;
  /** 1 when the signalled worker left the job frozen. */
  frozen: number;
  /** The signalled worker's exit code (or signal). */
  exit: string;
  ok: boolean;
}

export interface Store {
  engine: "sqlite" | "postgres";
  env: Record<string, string>;
  schema?: string;
}

/** A fresh store (file or schema), set up. */
export async function freshStore(engine: "sqlite" | "postgres"): Promise<Store> {
  const env: Record<string, string> =
    engine === "sqlite"
      ? { SONIQ_DATABASE_URL: `sqlite:${join(tempDir("soniq-sim-"), "soniq.db")}` }
      : { SONIQ_DATABASE_URL: TEST_DATABASE_URL, SONIQ_SCHEMA: freshSchema("soniq_sim") };
  const setup = await runCli(["setup"], env);
  if (setup.code !== 0) throw new Error(`setup failed: ${setup.stderr}`);
  return { engine, env, ...(env.SONIQ_SCHEMA ? { schema: env.SONIQ_SCHEMA } : {}) };
}

function inspector(store: Store): Soniq {
  return new Soniq({
    databaseUrl: store.env.SONIQ_DATABASE_URL,
    ...(store.env.SONIQ_SCHEMA ? { schema: store.env.SONIQ_SCHEMA } : {}),
    env: {},
    logger: pino({ level: "silent" }),
    rejectUnknownJobs: false,
  });
}

interface Ctx {
  store: Store;
  provider: RemoteProvider;
  db: Soniq;
  env: Record<string, string>;
}

function worker(
  ctx: Ctx,
  extra: Record<string, string> = {},
): Running & { ready: Promise<unknown> } {
  const w = startCli(["worker", SIM_FIXTURE], { ...ctx.env, ...extra });
  const ready = waitFor(() => w.stderr().includes("worker started"), 30_000, "worker started");
  return { ...w, ready };
}

async function phase(ctx: Ctx, id: string): Promise<string> {
  const record = await ctx.db.remote.show(id).catch(() => null);
  const job = await ctx.db.getJob(id);
  if (!job) return (await ctx.db.getDeadLetter(id)) ? "dead_letter" : "missing";
  if (job.status !== "processing") return job.status;
  if (!record) return "claimed";
  return record.phase === "accepted" ? (record.workerId ? "polling" : "awaiting") : record.phase;
}

/** Runs the successor to the end of the job; returns the delay to its first progress (ms). */
async function successor(ctx: Ctx, id: string, exitedAt: number): Promise<number | null> {
  const before = await phase(ctx, id);
  const s = worker(ctx);
  await s.ready;
  let firstProgress: number | null = null;
  await waitFor(
    async () => {
      const now = await phase(ctx, id);
      if (firstProgress === null && now !== before) firstProgress = Date.now();
      return now === "done" || now === "dead_letter";
    },
    30_000,
    `job ${id} done by the successor`,
  );
  s.child.kill("SIGTERM");
  await s.exited;
  return firstProgress === null ? null : firstProgress - exitedAt;
}

interface CaseSpec {
  name: string;
  /** The job's arguments. */
  args: Record<string, unknown>;
  /** Extra SONIQ_* for the signalled worker. */
  workerEnv?: Record<string, string>;
  /** Waits until the moment to signal (the worker is ready; `id` may be null before enqueue). */
  before(ctx: Ctx, id: string): Promise<void>;
  /** Enqueue after the signal instead of before. */
  enqueueAfterSignal?: boolean;
  /** Sends the signal(s); returns the instant of the first. */
  signal?(w: Running): Promise<number>;
  /** The state the signalled worker must leave the job in. */
  expectAfterExit: string[];
}

const sigterm = async (w: Running) => {
  const t = Date.now();
  w.child.kill("SIGTERM");
  return t;
};

const CASES: CaseSpec[] = [
  {
    name: "signal before a claim",
    args: {},
    enqueueAfterSignal: true,
    before: async () => undefined,
    expectAfterExit: ["queued"],
  },
  {
    name: "after a claim, before submission",
    args: { preflightMs: 5000 },
    before: async (ctx, id) => {
      await waitFor(async () => (await phase(ctx, id)) === "claimed", 20_000, "claimed");
    },
    expectAfterExit: ["queued"],
  },
  {
    name: "while the POST awaits its answer",
    args: { behaviour: { delayMs: 4000, polls: 1 } },
    before: async (ctx, id) => {
      await waitFor(() => ctx.provider.postsByKey.get(`${id}:1`) === 1, 20_000, "POST sent");
    },
    expectAfterExit: ["frozen"],
  },
  {
    name: "after the 202, before the task id is written",
    args: { behaviour: { polls: 1 }, afterAcceptMs: 500 },
    before: async (ctx, id) => {
      await waitFor(() => ctx.provider.postsByKey.get(`${id}:1`) === 1, 20_000, "202 sent");
    },
    expectAfterExit: ["awaiting"],
  },
  {
    name: "after the task id is written, before the acknowledgement",
    args: { behaviour: { polls: 1 } },
    // The first poll is due 1.5 s after accepted: long enough to signal in between.
    workerEnv: { REMOTE_POLL_EVERY: "1.5" },
    before: async (ctx, id) => {
      await waitFor(async () => (await phase(ctx, id)) === "awaiting", 20_000, "accepted written");
    },
    expectAfterExit: ["awaiting"],
  },
  {
    name: "while a successor polls",
    args: { behaviour: { polls: 0, pollDelayMs: 4000 } },
    before: async (ctx, id) => {
      await waitFor(async () => (await phase(ctx, id)) === "polling", 20_000, "polling");
    },
    expectAfterExit: ["awaiting"],
  },
  {
    name: "a second signal during the drain",
    args: { behaviour: { delayMs: 4000, polls: 1 } },
    before: async (ctx, id) => {
      await waitFor(() => ctx.provider.postsByKey.get(`${id}:1`) === 1, 20_000, "POST sent");
    },
    signal: async (w) => {
      const t = Date.now();
      w.child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 300));
      w.child.kill("SIGTERM");
      return t;
    },
    expectAfterExit: ["frozen"],
  },
  {
    name: "SIGKILL at the platform deadline",
    args: { behaviour: { delayMs: 8000, polls: 1 } },
    workerEnv: { SONIQ_SHUTDOWN_TIMEOUT: "20" },
    before: async (ctx, id) => {
      await waitFor(() => ctx.provider.postsByKey.get(`${id}:1`) === 1, 20_000, "POST sent");
    },
    signal: async (w) => {
      const t = Date.now();
      w.child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 800)); // the platform's grace, shorter than the drain
      w.child.kill("SIGKILL");
      return t;
    },
    expectAfterExit: ["submitting"],
  },
];

/** The case names, in the order docs/remote-jobs.md lists them. */
export const CASE_NAMES = CASES.map((c) => c.name);

async function runCase(
  spec: CaseSpec,
  store: Store,
  provider: RemoteProvider,
): Promise<CaseReport> {
  const db = inspector(store);
  const env = {
    ...store.env,
    PROVIDER_URL: provider.url,
    SONIQ_POLL_INTERVAL: "0.1",
    SONIQ_HEARTBEAT_INTERVAL: "0.2",
    SONIQ_HEARTBEAT_TIMEOUT: "1",
    SONIQ_SHUTDOWN_TIMEOUT: "1",
    SONIQ_SHUTDOWN_SETTLE: "0.2",
    SONIQ_LOG_LEVEL: "info",
  };
  const ctx: Ctx = { store, provider, db, env };
  try {
    const w = worker(ctx, spec.workerEnv ?? {});
    await w.ready;
    let id = "";
    const enqueue = async () => db.enqueue("music.generate", spec.args);
    if (!spec.enqueueAfterSignal) {
      id = await enqueue();
      await spec.before(ctx, id);
    }
    const signalledAt = await (spec.signal ?? sigterm)(w);
    if (spec.enqueueAfterSignal) {
      await waitFor(() => w.stderr().includes("draining"), 20_000, "drain started");
      id = await enqueue();
    }
    const exit = await w.exited;
    const exitedAt = Date.now();
    const after = await phase(ctx, id);
    const frozen = after === "frozen" ? 1 : 0;
    const delay = await successor(ctx, id, exitedAt);
    const final = await phase(ctx, id);
    const keys = [...provider.postsByKey].filter(([k]) => k.startsWith(id));
    const duplicates =
      keys.reduce((n, [, c]) => n + Math.max(0, c - 1), 0) + Math.max(0, keys.length - 1);
    const recorded = (await db.remote.show(id).catch(() => null))?.taskId;
    const tasks = [...provider.tasks.values()].filter((t) => t.key.startsWith(id));
    const orphans = tasks.filter((t) => t.id !== recorded).length;
    const code = exit.code ?? exit.signal ?? "?";
    return {
      engine: store.engine,
      case: spec.name,
      final,
      duplicate_submissions: duplicates,
      orphaned_task_ids: orphans,
      redelivery_delay_ms: delay,
      drain_duration_ms: exitedAt - signalledAt,
      forced_exits: exit.signal === "SIGKILL" || exit.code === 1 ? 1 : 0,
      frozen,
      exit: String(code),
      ok:
        final === "done" &&
        duplicates === 0 &&
        orphans === 0 &&
        spec.expectAfterExit.includes(after) &&
        (spec.name !== "a second signal during the drain" || exitedAt - signalledAt < 2500),
    };
  } finally {
    await db.close();
  }
}

/** Runs every case on each engine, one store per engine; returns the reports. */
export async function runDeploySim(
  provider: RemoteProvider,
  engines: ReadonlyArray<"sqlite" | "postgres">,
  only?: (name: string) => boolean,
): Promise<{ cases: CaseReport[]; schemas: string[] }> {
  const cases: CaseReport[] = [];
  const schemas: string[] = [];
  for (const engine of engines) {
    const store = await freshStore(engine);
    if (store.schema) schemas.push(store.schema);
    for (const spec of CASES) {
      if (only && !only(spec.name)) continue;
      cases.push(await runCase(spec, store, provider));
    }
  }
  return { cases, schemas };
}

/** The durable-write boundaries a worker is SIGKILLed at (test/fixtures/remote-jobs.ts). */
export const CRASH_POINTS = [
  "after_claim",
  "before_post",
  "after_202",
  "in_poll",
  "before_done",
] as const;

/** One crash run's report. */
export interface CrashReport {
  engine: string;
  point: string;
  final: string;
  /** POSTs per idempotency key of the job (all must be 1, under the first key). */
  posts: Record<string, number>;
  ok: boolean;
}

/**
 * SIGKILL between durable writes: a worker killed at `point`, then a successor (with reconcile)
 * finishes the job. The only second POST allowed is reconcile answering `notSubmitted` for a task
 * the provider never received — under the same idempotency key, so never a second task.
 */
export async function runCrashPoint(
  store: Store,
  provider: RemoteProvider,
  point: (typeof CRASH_POINTS)[number],
): Promise<CrashReport> {
  const db = inspector(store);
  const env = {
    ...store.env,
    PROVIDER_URL: provider.url,
    SONIQ_POLL_INTERVAL: "0.1",
    SONIQ_HEARTBEAT_INTERVAL: "0.2",
    SONIQ_HEARTBEAT_TIMEOUT: "1",
    SONIQ_SHUTDOWN_TIMEOUT: "1",
    SONIQ_LOG_LEVEL: "info",
  };
  const ctx: Ctx = { store, provider, db, env };
  try {
    const id = await db.enqueue("music.generate", { behaviour: { polls: 1 } });
    const w = worker(ctx, { REMOTE_CRASH_AT: point });
    const exit = await w.exited;
    if (exit.signal !== "SIGKILL")
      throw new Error(`the worker was not killed at ${point}: ${exit.stderr.slice(-500)}`);
    await successor(ctx, id, Date.now());
    const final = await phase(ctx, id);
    const posts = Object.fromEntries([...provider.postsByKey].filter(([k]) => k.startsWith(id)));
    const tasks = [...provider.tasks.values()].filter((t) => t.key.startsWith(id));
    return {
      engine: store.engine,
      point,
      final,
      posts,
      ok:
        final === "done" &&
        Object.keys(posts).length === 1 &&
        Object.values(posts).every((n) => n === 1) &&
        tasks.length === 1,
    };
  } finally {
    await db.close();
  }
}
