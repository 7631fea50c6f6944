/**
 * The remote kill stress (docs/remote-jobs.md, "Verifying it"): a real `soniq worker` process on
 * the remote-jobs fixture is SIGKILLed at each boundary (claim → submitting → POST → accepted →
 * poll → done), `runs` times per boundary, at a seeded random offset of 0–`maxDelayMs` after the
 * boundary marker (so kills land on the marker, inside the durable write or request that follows
 * it, and at the next boundary), then an in-process successor with `reconcile` finishes the job.
 * After each run it checks: the state the kill left is one that names a durable phase, no duplicate
 * POST except one that follows a reconcile answering `notSubmitted` (then with the same idempotency
 * key), no orphaned task id (every task the provider accepted for the job is the one its submission
 * records), no second idempotency key, and the job done. Used by `npm run remote-kill-stress` and
 * test/e2e/remote-kill-stress.test.ts.
 */
import type { Backend } from "../../src/backends/contract/index.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import type { Soniq } from "../../src/index.js";
import { startCli } from "../helpers/cli.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import type { RemoteProvider } from "../helpers/remote-provider.js";
import { waitFor } from "../helpers/wait.js";
import { CRASH_POINTS, freshStore, SIM_FIXTURE, type Store } from "./deploy-sim.js";
import { remoteInstance } from "./harness.js";

/** A boundary a worker is killed at (test/fixtures/remote-jobs.ts). */
export type CrashPoint = (typeof CRASH_POINTS)[number];

/**
 * The least advanced state a kill at each point can leave (states in {@link STATE_RANK} order):
 * a kill `delayMs` after the marker may leave a later one, never an earlier one.
 */
const FLOOR: Record<CrashPoint, number> = {
  after_claim: 0,
  before_post: 1,
  after_202: 1,
  in_poll: 2,
  before_done: 2,
};

/** Every state a killed worker may leave a job in, by how far it got. */
const STATE_RANK: Record<string, number> = {
  claimed: 0,
  submitting: 1,
  awaiting: 2,
  polling: 2,
  done: 3,
};

/** One run's report. */
export interface KillRun {
  engine: "sqlite" | "postgres";
  point: CrashPoint;
  /** Milliseconds after the boundary marker the SIGKILL was armed for (0: at the marker). */
  delayMs: number;
  /** The job's durable state right after the kill: claimed, submitting, awaiting, polling, done. */
  afterKill: string;
  /** The job's state once the successor finished: must be `done`. */
  final: string;
  /** POSTs per idempotency key of the job. */
  posts: Record<string, number>;
  /** Reconciles that answered `notSubmitted` for the job (the only allowance for a second POST). */
  notSubmitted: number;
  /** Tasks the provider accepted for the job that its submission does not record. */
  orphanedTaskIds: number;
  /** Milliseconds from the enqueue to the killed worker's exit (its start-up included). */
  killMs: number;
  /** Milliseconds the run took. */
  ms: number;
  ok: boolean;
  /** Why the run failed (empty when ok). */
  problems: string[];
}

/** Options of {@link runKillStress}. */
export interface KillStressOptions {
  engine: "sqlite" | "postgres";
  provider: RemoteProvider;
  /** Kills per boundary. */
  runs: number;
  /** Offsets are drawn uniformly from 0..maxDelayMs; the first run of each point uses 0. */
  maxDelayMs: number;
  seed: number;
  /** Called after each run (progress). */
  onRun?: (run: KillRun) => void;
}

/** A small seeded PRNG (mulberry32): uniform in [0, 1). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The job's durable state, in the words of {@link STATE_RANK} (or `queued`, `frozen`, …). */
async function stateOf(soniq: Soniq, id: string): Promise<string> {
  const record = await soniq.remote.show(id).catch(() => null);
  const job = await soniq.getJob(id);
  if (!job) return (await soniq.getDeadLetter(id)) ? "dead_letter" : "missing";
  if (job.status !== "processing") return job.status;
  if (!record) return "claimed";
  return record.phase === "accepted" ? (record.workerId ? "polling" : "awaiting") : record.phase;
}

function backendFor(store: Store): Backend {
  const url = store.env.SONIQ_DATABASE_URL as string;
  if (store.engine === "sqlite") return new SqliteBackend({ path: url.slice("sqlite:".length) });
  return new PostgresBackend({
    connectionString: TEST_DATABASE_URL,
    schema: store.schema as string,
    poolSize: 4,
  });
}

/**
 * Runs `runs` kills at every boundary on one fresh store of `engine` (a SQLite file or a
 * PostgreSQL schema); returns one report per run and the schema to drop (PostgreSQL).
 */
export async function runKillStress(
  options: KillStressOptions,
): Promise<{ runs: KillRun[]; schema?: string }> {
  const { engine, provider } = options;
  const store = await freshStore(engine);
  const backend = backendFor(store);
  await backend.setup();
  // The successor: in-process, with reconcile; it judges the killed worker by the heartbeat
  // timeout the worker declared (0.5 s).
  const { soniq } = remoteInstance(backend, provider, {
    reconcile: true,
    settings: { heartbeatInterval: 0.1, heartbeatTimeout: 0.5 },
  });
  const released = new Map<string, number>();
  soniq.events.on("remote_phase", (e) => {
    if (e.phase === "released") released.set(e.job_id, (released.get(e.job_id) ?? 0) + 1);
  });
  const rnd = prng(options.seed);
  const env = {
    ...store.env,
    PROVIDER_URL: provider.url,
    SONIQ_POLL_INTERVAL: "0.1",
    SONIQ_HEARTBEAT_INTERVAL: "0.1",
    SONIQ_HEARTBEAT_TIMEOUT: "0.5",
    SONIQ_SHUTDOWN_TIMEOUT: "1",
    SONIQ_LOG_LEVEL: "warn",
  };
  const out: KillRun[] = [];
  try {
    for (let run = 0; run < options.runs; run += 1) {
      for (const point of CRASH_POINTS) {
        const delayMs = run === 0 ? 0 : Math.floor(rnd() * (options.maxDelayMs + 1));
        const t0 = Date.now();
        const problems: string[] = [];
        const id = await soniq.enqueue("music.generate", { behaviour: { polls: 1 } });
        const killed = startCli(["worker", SIM_FIXTURE], {
          ...env,
          REMOTE_CRASH_AT: point,
          REMOTE_CRASH_DELAY_MS: String(delayMs),
        });
        const exit = await Promise.race([
          killed.exited,
          new Promise<null>((resolve) => setTimeout(() => resolve(null), 30_000)),
        ]);
        if (exit === null) {
          killed.child.kill("SIGKILL");
          await killed.exited;
          problems.push("the worker did not reach the crash point within 30 s");
        } else if (exit.signal !== "SIGKILL") {
          problems.push(`the worker exited ${exit.code ?? exit.signal}, not by SIGKILL`);
        }
        const killMs = Date.now() - t0;
        const afterKill = await stateOf(soniq, id);
        const rank = STATE_RANK[afterKill];
        if (rank === undefined) problems.push(`after the kill: unexplainable state ${afterKill}`);
        else if (rank < FLOOR[point])
          problems.push(`after the kill: ${afterKill} is before the boundary ${point}`);
        const successor = soniq.worker({ concurrency: 2 });
        await successor.start();
        let final = "?";
        try {
          await waitFor(
            async () => {
              final = await stateOf(soniq, id);
              return final === "done" || final === "dead_letter";
            },
            30_000,
            `job ${id} finished by the successor`,
          );
        } catch {
          // reported below from `final`
        } finally {
          await successor.stop();
        }
        if (final !== "done") problems.push(`final state ${final}, not done`);
        const posts = Object.fromEntries(
          [...provider.postsByKey].filter(([k]) => k.startsWith(`${id}:`)),
        );
        const notSubmitted = released.get(id) ?? 0;
        const keys = Object.keys(posts);
        if (keys.length !== 1 || keys[0] !== `${id}:1`)
          problems.push(`idempotency keys POSTed: ${JSON.stringify(keys)} (want only ${id}:1)`);
        for (const [key, n] of Object.entries(posts)) {
          if (n > 1 + notSubmitted)
            problems.push(
              `duplicate POST: ${n} under ${key} with ${notSubmitted} reconcile(s) answering notSubmitted`,
            );
        }
        const recorded = (await soniq.remote.show(id).catch(() => null))?.taskId ?? null;
        const tasks = [...provider.tasks.values()].filter((t) => t.key.startsWith(`${id}:`));
        const orphanedTaskIds = tasks.filter((t) => t.id !== recorded).length;
        if (orphanedTaskIds > 0) problems.push(`${orphanedTaskIds} orphaned task id(s)`);
        if (tasks.length !== 1) problems.push(`${tasks.length} provider tasks for the job`);
        const report: KillRun = {
          engine,
          point,
          delayMs,
          afterKill,
          final,
          posts,
          notSubmitted,
          orphanedTaskIds,
          killMs,
          ms: Date.now() - t0,
          ok: problems.length === 0,
          problems,
        };
        out.push(report);
        options.onRun?.(report);
      }
    }
  } finally {
    await soniq.close();
  }
  return { runs: out, ...(store.schema ? { schema: store.schema } : {}) };
}

/** Totals of a set of runs, per engine and over all: what the report and the test check. */
export function summarise(runs: readonly KillRun[]) {
  const byState: Record<string, Record<string, number>> = {};
  for (const r of runs) {
    const key = `${r.engine} ${r.point}`;
    byState[key] ??= {};
    const cell = byState[key] as Record<string, number>;
    cell[r.afterKill] = (cell[r.afterKill] ?? 0) + 1;
  }
  const sum = (f: (r: KillRun) => number) => runs.reduce((n, r) => n + f(r), 0);
  return {
    runs: runs.length,
    passed: runs.filter((r) => r.ok).length,
    duplicate_posts: sum((r) =>
      Object.values(r.posts).reduce((n, c) => n + Math.max(0, c - 1 - r.notSubmitted), 0),
    ),
    second_posts_after_not_submitted: sum((r) =>
      Object.values(r.posts).reduce((n, c) => n + Math.min(Math.max(0, c - 1), r.notSubmitted), 0),
    ),
    reconciled_not_submitted: sum((r) => r.notSubmitted),
    orphaned_task_ids: sum((r) => r.orphanedTaskIds),
    not_done: runs.filter((r) => r.final !== "done").length,
    state_after_kill: byState,
    mean_run_ms: runs.length ? Math.round(sum((r) => r.ms) / runs.length) : 0,
    mean_kill_ms: runs.length ? Math.round(sum((r) => r.killMs) / runs.length) : 0,
  };
}
