/**
 * Flows and batches in a chaos run (docs/workflows.md; docs/reliability.md, "Chaos testing"):
 * fan-out/fan-in flows (a root waiting on its children) and batches with onComplete, onSuccess
 * and onFailure callbacks, decided up front from the run's seed, enqueued by the producer over the
 * same window as the plain jobs, run by the chaos workers under the same faults.
 *
 * - {@link registerFlowJobs}: the jobs (chaos/jobs.ts). Every run of a child or member appends
 *   `start`/`end` to the flow log (`CHAOS_FLOW_LOG`, one line per append, from every worker
 *   process); a root appends `root` with its dependencies' states as `ctx.dependencies()` gave
 *   them; a callback appends `cbend` when its work is done.
 * - {@link produceFlows}: the producer's part; appends each acknowledged flow or batch (its job
 *   ids) to `CHAOS_FLOWS_FILE` as one JSON line.
 * - {@link settleFlows}: after the plain jobs drained, waits (workers still running) until every
 *   root and callback ended.
 * - {@link analyzeFlows}: the must-be-zero checks, from the store, the flow log and the faults.
 *
 * Job names start with `chaos.flow` ({@link FLOW_NAME_LIKE}): the plain jobs' checks leave them
 * out. One flow in eight and one batch in eight has a member that fails for good (`maxAttempts`
 * 1): its root is dead-lettered `dependency_failed` without running, its onFailure runs and its
 * onSuccess is cancelled.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import Database from "better-sqlite3";
import pg from "pg";
import { pino } from "pino";
import { Soniq } from "soniq";
import { prng } from "./plan.js";
import type { Check, FaultRecord, WorkerExitRecord } from "./report.js";

/** SQL `LIKE` pattern of the flow and batch jobs' names. */
export const FLOW_NAME_LIKE = "chaos.flow%";
const CHILD = "chaos.flow_child";
const ROOT = "chaos.flow_root";
const CALLBACK = "chaos.flow_callback";

/** One flow or batch of a run (decided from the seed). */
export interface FlowPlan {
  kind: "flow" | "batch";
  n: number;
  /** Handler times of the children (members), milliseconds. */
  childMs: number[];
  /** Index of the child that fails for good, or -1. */
  failing: number;
}

/** Flows and batches a run of `jobs` plain jobs adds: a hundredth each, at least 8. */
export function flowCount(jobs: number): number {
  return Math.max(8, Math.round(jobs / 100));
}

/** Flow or batch `n` (flows even, batches odd) of a run seeded with `seed`. */
export function flowPlan(seed: number, n: number): FlowPlan {
  const rnd = prng((seed ^ 0x5f10a7 ^ Math.imul(n + 1, 0x9e3779b1)) >>> 0);
  const kind = n % 2 === 0 ? "flow" : "batch";
  // Flow 0 is a wide fan-in (200 children: many ends at once on one counter row).
  const size =
    n === 0 ? 200 : kind === "flow" ? 3 + Math.floor(rnd() * 28) : 2 + Math.floor(rnd() * 11);
  const childMs = Array.from({ length: size }, () =>
    rnd() < 0.5 ? Math.floor(rnd() * 50) : 100 + Math.floor(rnd() * 1400),
  );
  const failing = n !== 0 && rnd() < 0.125 ? Math.floor(rnd() * size) : -1;
  return { kind, n, childMs, failing };
}

// ---- the jobs -------------------------------------------------------------------------------------

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

function flowLog(line: string): void {
  const path = process.env.CHAOS_FLOW_LOG;
  if (path) appendFileSync(path, `${line}\n`);
}

/** Registers the flow and batch jobs on `soniq` (the chaos workers' instance). */
export function registerFlowJobs(soniq: Soniq): void {
  soniq.job({
    name: CHILD,
    maxAttempts: 3,
    retry: { kind: "fixed", delay: 0.2 },
    handler: async (args: { ms: number; fail: boolean }, ctx) => {
      flowLog(`start ${ctx.jobId} ${process.pid} ${Date.now()}`);
      await sleep(args.ms, ctx.signal);
      if (args.fail) throw new Error("chaos: a flow child that fails for good");
      flowLog(`end ${ctx.jobId} ${process.pid} ${Date.now()}`);
      return args.ms;
    },
  });
  soniq.job({
    name: ROOT,
    handler: async (_args: { n: number }, ctx) => {
      const started = Date.now();
      const deps = await ctx.dependencies();
      flowLog(
        `root ${ctx.jobId} ${process.pid} ${started} ${deps.map((d) => d.state ?? "none").join(",")}`,
      );
      await sleep(20, ctx.signal);
      return deps.length;
    },
  });
  soniq.job({
    name: CALLBACK,
    handler: async (args: { n: number; kind: string }, ctx) => {
      const deps = await ctx.dependencies();
      await sleep(50, ctx.signal);
      flowLog(
        `cbend ${ctx.jobId} ${process.pid} ${Date.now()} ${args.kind} ${deps.map((d) => d.state ?? "none").join(",")}`,
      );
      return deps.length;
    },
  });
}

// ---- the producer's part --------------------------------------------------------------------------

/** One acknowledged flow or batch, as the producer records it. */
export interface FlowRecord {
  kind: "flow" | "batch";
  n: number;
  /** Flow: the root's id. Batch: the batch's id. */
  id: string;
  /** The children (members), in plan order. */
  children: string[];
  failing: number;
  /** Batch: callback kind → job id. */
  callbacks?: Record<string, string>;
}

/**
 * Enqueues `count` flows and batches evenly over `seconds`, retrying each until it lands, and
 * appends each to `file` (a JSON line). A flow takes no dedup key: a retry after an ambiguous
 * failure may leave a second copy, which runs but is not checked.
 */
export async function produceFlows(options: {
  soniq: Soniq;
  seed: number;
  count: number;
  seconds: number;
  file: string;
}): Promise<void> {
  const { soniq, seed, count, seconds, file } = options;
  const began = Date.now();
  for (let n = 0; n < count; n++) {
    const wait = began + (n * seconds * 1000) / count - Date.now();
    if (wait > 0) await sleep(wait);
    const plan = flowPlan(seed, n);
    const children = plan.childMs.map((ms, k) => ({
      job: CHILD,
      args: { ms, fail: k === plan.failing },
      options: { maxAttempts: k === plan.failing ? 1 : 3 },
    }));
    for (let i = 0; ; i++) {
      try {
        let record: FlowRecord;
        if (plan.kind === "flow") {
          const flow = await soniq.flow({ job: ROOT, args: { n }, children });
          record = {
            kind: "flow",
            n,
            id: flow.id,
            children: flow.ids.slice(1),
            failing: plan.failing,
          };
        } else {
          const batch = await soniq.batch({
            jobs: children,
            onComplete: { job: CALLBACK, args: { n, kind: "complete" } },
            onSuccess: { job: CALLBACK, args: { n, kind: "success" } },
            onFailure: { job: CALLBACK, args: { n, kind: "failure" } },
          });
          record = {
            kind: "batch",
            n,
            id: batch.id,
            children: [...batch.ids],
            failing: plan.failing,
            callbacks: {
              complete: batch.callbacks.onComplete as string,
              success: batch.callbacks.onSuccess as string,
              failure: batch.callbacks.onFailure as string,
            },
          };
        }
        appendFileSync(file, `${JSON.stringify(record)}\n`);
        break;
      } catch (err) {
        if (i % 10 === 0) process.stderr.write(`producer: flow ${n} failed, retrying: ${err}\n`);
        await sleep(Math.min(1000, 50 * 2 ** i));
      }
    }
  }
}

// ---- settle and analyse ---------------------------------------------------------------------------

/** Where the store is (the harness's SONIQ_* of it). */
export interface FlowStoreEnv {
  SONIQ_DATABASE_URL?: string;
  SONIQ_SCHEMA?: string;
}

function inspector(env: FlowStoreEnv): Soniq {
  return new Soniq({
    databaseUrl: env.SONIQ_DATABASE_URL as string,
    ...(env.SONIQ_SCHEMA ? { schema: env.SONIQ_SCHEMA } : {}),
    env: {},
    logger: pino({ level: "silent" }),
    rejectUnknownJobs: false,
    poolSize: 2,
  });
}

/** The recorded flows and batches. */
export function readFlowRecords(file: string): FlowRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as FlowRecord);
}

/** `waiting`, `queued`, `processing`, `done`, `cancelled`, `dead:<reason>` or `missing`. */
async function stateOf(soniq: Soniq, id: string): Promise<string> {
  const job = await soniq.getJob(id);
  if (job) {
    if (job.status === "queued" && job.scheduledAt.getUTCFullYear() === 9999) return "waiting";
    return job.status;
  }
  const dead = await soniq.getDeadLetter(id);
  return dead ? `dead:${dead.reason}` : "missing";
}

/** The jobs whose end the run waits for: each flow's root, each batch's callbacks. */
function lastJobs(records: FlowRecord[]): string[] {
  return records.flatMap((r) => (r.kind === "flow" ? [r.id] : Object.values(r.callbacks ?? {})));
}

/**
 * Waits, the workers still running, until every root and callback recorded in `file` ended (done,
 * cancelled or dead-lettered), at most `timeoutMs`. Returns how long it took and how many had not.
 */
export async function settleFlows(
  env: FlowStoreEnv,
  file: string,
  timeoutMs: number,
): Promise<{ settleMs: number; unsettled: number }> {
  const began = Date.now();
  const soniq = inspector(env);
  let unsettled = -1;
  try {
    const ids = lastJobs(readFlowRecords(file));
    while (Date.now() - began < timeoutMs) {
      unsettled = 0;
      for (const id of ids) {
        const s = await stateOf(soniq, id).catch(() => "error");
        if (s === "waiting" || s === "queued" || s === "processing" || s === "error") unsettled++;
      }
      if (unsettled === 0) break;
      await sleep(500);
    }
  } finally {
    await soniq.close();
  }
  return { settleMs: Date.now() - began, unsettled };
}

/** Waiting jobs (far-future due time) with at least one edge and every edge ended. */
async function strandedCount(env: FlowStoreEnv): Promise<number> {
  const url = env.SONIQ_DATABASE_URL as string;
  const sql = (farFuture: string, q: (t: string) => string) =>
    `SELECT count(*) AS n FROM ${q("soniq_jobs")} AS j
     WHERE j.status = 'queued' AND j.scheduled_at >= ${farFuture}
       AND EXISTS (SELECT 1 FROM ${q("soniq_job_deps")} AS d WHERE d.job_id = j.id)
       AND NOT EXISTS (SELECT 1 FROM ${q("soniq_job_deps")} AS d
                       WHERE d.job_id = j.id AND d.dep_state IS NULL)`;
  if (url.startsWith("sqlite:")) {
    const db = new Database(url.slice("sqlite:".length), { readonly: true, timeout: 10_000 });
    try {
      const row = db.prepare(sql("253370764800000", (t) => t)).get() as { n: number };
      return Number(row.n);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const schema = env.SONIQ_SCHEMA as string;
    const { rows } = await client.query(
      sql("'9999-01-01T00:00:00Z'::timestamptz", (t) => `"${schema}".${t}`),
    );
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}

/** One line of the flow log. */
interface FlowLogLine {
  kind: string;
  id: string;
  pid: number;
  at: number;
  rest: string[];
}

function readFlowLog(path: string): FlowLogLine[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [kind = "", id = "", pid = "0", at = "0", ...rest] = l.split(" ");
      return { kind, id, pid: Number(pid), at: Number(at), rest };
    });
}

/** What {@link analyzeFlows} reads besides the store. */
export interface FlowAnalysisInput {
  env: FlowStoreEnv;
  /** The producer's records (`CHAOS_FLOWS_FILE`). */
  recordsFile: string;
  /** The workers' flow log (`CHAOS_FLOW_LOG`). */
  logFile: string;
  faults: FaultRecord[];
  exits: WorkerExitRecord[];
}

/**
 * The flow and batch checks (must be zero unless said): flow and batch jobs lost (recorded, found
 * nowhere), jobs not ended as their plan says (a root done, or dead-lettered `dependency_failed`
 * when a child failed for good; each callback done or cancelled by the batch's outcome; nothing
 * left waiting, queued or running), dependants stranded (waiting with every dependency ended),
 * dependants run before a dependency finished (a root that ran with a dependency not done, or
 * before a child's last successful run ended), batch callbacks fired twice (a second run after a
 * run that finished its work, unless the first run's process was SIGKILLed or paused beyond the
 * stale window, or a PostgreSQL restart was under way), and callbacks never fired.
 */
export async function analyzeFlows(input: FlowAnalysisInput): Promise<{
  checks: Check[];
  details: string[];
  failed: string[];
}> {
  const records = readFlowRecords(input.recordsFile);
  const log = readFlowLog(input.logFile);
  const checks: Check[] = [];
  const details: string[] = [];
  const soniq = inspector(input.env);
  const states = new Map<string, string>();
  try {
    for (const r of records) {
      const ids = [r.id, ...r.children, ...Object.values(r.callbacks ?? {})];
      for (const id of r.kind === "flow" ? ids : ids.slice(1)) {
        states.set(id, await stateOf(soniq, id));
      }
    }
  } finally {
    await soniq.close();
  }
  const flows = records.filter((r) => r.kind === "flow");
  const batches = records.filter((r) => r.kind === "batch");
  checks.push({
    name: "flows / batches enqueued (children / members)",
    value: `${flows.length} / ${batches.length} (${flows.reduce((s, r) => s + r.children.length, 0)} / ${batches.reduce((s, r) => s + r.children.length, 0)})`,
  });

  // Lost, and not ended as planned.
  const lost = [...states].filter(([, s]) => s === "missing").map(([id]) => id);
  for (const id of lost.slice(0, 20)) details.push(`flow job lost: ${id}`);
  checks.push({
    name: "flow and batch jobs lost (must be 0)",
    value: String(lost.length),
    ok: lost.length === 0,
  });
  const wrong: string[] = [];
  const expect = (id: string, want: string, what: string) => {
    const got = states.get(id);
    if (got !== want && got !== "missing") wrong.push(`${what} ${id}: ${got}, expected ${want}`);
  };
  for (const r of records) {
    r.children.forEach((id, k) => {
      expect(
        id,
        k === r.failing ? "dead:max_attempts_exceeded" : "done",
        `${r.kind} ${r.n} child ${k}`,
      );
    });
    const failed = r.failing >= 0;
    if (r.kind === "flow")
      expect(r.id, failed ? "dead:dependency_failed" : "done", `flow ${r.n} root`);
    else {
      const cb = r.callbacks ?? {};
      expect(cb.complete as string, "done", `batch ${r.n} onComplete`);
      expect(cb.success as string, failed ? "cancelled" : "done", `batch ${r.n} onSuccess`);
      expect(cb.failure as string, failed ? "done" : "cancelled", `batch ${r.n} onFailure`);
    }
  }
  details.push(...wrong.slice(0, 20));
  checks.push({
    name: "flow and batch jobs not ended as planned (must be 0)",
    value: String(wrong.length),
    ok: wrong.length === 0,
  });

  const stranded = await strandedCount(input.env);
  checks.push({
    name: "dependants stranded: waiting, every dependency ended (must be 0)",
    value: String(stranded),
    ok: stranded === 0,
  });

  // Run before a dependency finished: each child must have a successful run that ended before
  // the root's run began (a later end line can come from a paused, already recovered run).
  const ends = new Map<string, number[]>();
  for (const l of log) if (l.kind === "end") ends.set(l.id, [...(ends.get(l.id) ?? []), l.at]);
  const early: string[] = [];
  for (const r of flows) {
    for (const run of log.filter((l) => l.kind === "root" && l.id === r.id)) {
      const depStates = (run.rest[0] ?? "").split(",");
      const notDone = depStates.filter((s) => s !== "done").length;
      const before = r.children.filter((c) => !(ends.get(c) ?? []).some((at) => at <= run.at));
      if (notDone > 0 || before.length > 0 || depStates.length !== r.children.length) {
        early.push(
          `flow ${r.n} root ${r.id} ran at ${run.at} with ${notDone} of ${depStates.length} dependencies not done, ${before.length} children without an ended run`,
        );
      }
    }
  }
  details.push(...early.slice(0, 20));
  checks.push({
    name: "dependants run before a dependency finished (must be 0)",
    value: String(early.length),
    ok: early.length === 0,
  });

  // Callbacks: twice, or never.
  const killed = new Set(input.exits.filter((e) => e.signal === "SIGKILL").map((e) => e.pid));
  for (const f of input.faults) if (f.kind === "sigstop_long" && f.pid) killed.add(f.pid);
  const restarts = input.faults
    .filter((f) => f.kind === "pg_restart" && !f.skipped)
    .map((f) => [f.at, (f.readyAt ?? f.endAt ?? f.at) + 10_000] as const);
  const twice: string[] = [];
  const never: string[] = [];
  for (const r of batches) {
    const failed = r.failing >= 0;
    for (const [kind, id] of Object.entries(r.callbacks ?? {})) {
      const runs = log.filter((l) => l.kind === "cbend" && l.id === id).sort((a, b) => a.at - b.at);
      const shouldRun = kind === "complete" || (kind === "success") !== failed;
      if (shouldRun && runs.length === 0) never.push(`batch ${r.n} ${kind} ${id} never fired`);
      if (!shouldRun && runs.length > 0)
        never.push(`batch ${r.n} ${kind} ${id} fired against the outcome`);
      for (const earlier of runs.slice(0, -1)) {
        const explained =
          killed.has(earlier.pid) || restarts.some(([a, b]) => earlier.at >= a && earlier.at <= b);
        if (!explained)
          twice.push(
            `batch ${r.n} ${kind} ${id} ran again after a run by pid ${earlier.pid} finished`,
          );
      }
    }
  }
  details.push(...twice.slice(0, 20), ...never.slice(0, 20));
  checks.push({
    name: "batch callbacks fired twice (must be 0)",
    value: String(twice.length),
    ok: twice.length === 0,
  });
  checks.push({
    name: "batch callbacks never fired, or fired against the outcome (must be 0)",
    value: String(never.length),
    ok: never.length === 0,
  });
  const failed = checks.filter((c) => c.ok === false).map((c) => c.name);
  return { checks, details, failed };
}
