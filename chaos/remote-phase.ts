/**
 * The remote part of a chaos run's end (chaos/run.ts), while the workers still run: waits until
 * every remote job is finished or frozen waiting for an operator, then performs the operator step
 * with the admin API — for each frozen job, looks its idempotency key up at the provider (what an
 * operator does on the provider's dashboard) and resolves it `accepted(taskId)` or
 * `notSubmitted()` — and waits for those to finish. Then it reads what the report needs: each
 * remote job's final state and submission record, and the provider's counters.
 */
import { existsSync, readFileSync } from "node:fs";
import { pino } from "pino";
import { accepted, notSubmitted, Soniq } from "soniq";
import type { RemoteJobState, RemoteProviderState } from "./remote-report.js";
import { REMOTE_MANUAL_JOB } from "./remote-workload.js";

/** Where the store is (the harness's SONIQ_* of it). */
export interface RemoteStoreEnv {
  SONIQ_DATABASE_URL?: string;
  SONIQ_SCHEMA?: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function admin(env: RemoteStoreEnv): Soniq {
  return new Soniq({
    databaseUrl: env.SONIQ_DATABASE_URL as string,
    ...(env.SONIQ_SCHEMA ? { schema: env.SONIQ_SCHEMA } : {}),
    env: {},
    logger: pino({ level: "silent" }),
    rejectUnknownJobs: false,
    poolSize: 2,
  });
}

/** Reads the provider's state file (test/helpers/remote-provider.ts `stateFile`). */
export function readProviderState(path: string): RemoteProviderState {
  if (!existsSync(path)) return { posts: [], tasks: [] };
  return JSON.parse(readFileSync(path, "utf8")) as RemoteProviderState;
}

/** One remote job's state now. */
async function stateOf(soniq: Soniq, id: string, n: number): Promise<RemoteJobState> {
  const job = await soniq.getJob(id).catch(() => null);
  const record = await soniq.remote.show(id).catch(() => null);
  const dead = job ? null : await soniq.getDeadLetter(id).catch(() => null);
  return {
    id,
    n,
    name: job?.name ?? dead?.name ?? record?.name ?? "?",
    status: job ? job.status : dead ? "dead_letter" : "missing",
    deadReason: dead?.reason ?? null,
    phase: record?.phase ?? null,
    taskId: record?.taskId ?? null,
    generation: record?.generation ?? null,
    owner: record?.workerId ?? null,
  };
}

/** What the operator did. */
export interface OperatorStep {
  /** Frozen jobs resolved `accepted(taskId)` / `notSubmitted()`. */
  accepted: string[];
  notSubmitted: string[];
  /** Frozen jobs of `chaos.remote` (with reconcile) still frozen at the bound, resolved too. */
  reconcilableLeft: string[];
  /** Resolutions refused (a worker took the job meanwhile, …). */
  refused: string[];
  /** Milliseconds from the start of the remote settle to all remote jobs finished (or the bound). */
  settleMs: number;
}

/**
 * Waits (at most `boundMs`) until every remote job of `ids` (id → n) is done or dead-lettered,
 * or frozen waiting for an operator; resolves the frozen ones; waits again; returns what it did
 * and every job's final state.
 */
export async function settleRemote(
  env: RemoteStoreEnv,
  ids: Map<string, number>,
  providerState: () => RemoteProviderState,
  boundMs: number,
): Promise<{ operator: OperatorStep; jobs: RemoteJobState[] }> {
  const soniq = admin(env);
  const t0 = Date.now();
  const all = async () => Promise.all([...ids].map(([id, n]) => stateOf(soniq, id, n)));
  const finished = (s: RemoteJobState) => s.status === "done" || s.status === "dead_letter";
  const operator: OperatorStep = {
    accepted: [],
    notSubmitted: [],
    reconcilableLeft: [],
    refused: [],
    settleMs: 0,
  };
  try {
    const firstBound = t0 + boundMs / 2;
    let states = await all();
    // 1. Until only jobs waiting for an operator are left (frozen, no owner, no reconcile).
    while (Date.now() < firstBound) {
      const open = states.filter(
        (s) =>
          !finished(s) &&
          !(s.phase === "frozen" && s.owner === null && s.name === REMOTE_MANUAL_JOB),
      );
      if (open.length === 0) break;
      await sleep(250);
      states = await all();
    }
    // 2. The operator step: every frozen job, by its idempotency key at the provider.
    const tasks = providerState().tasks;
    for (const s of states.filter((x) => x.phase === "frozen" && !finished(x))) {
      if (s.name !== REMOTE_MANUAL_JOB) operator.reconcilableLeft.push(s.id);
      const key = `${s.id}:${s.generation ?? 1}`;
      const task = tasks.find((t) => t.key === key);
      try {
        await soniq.remote.resolve(s.id, task ? accepted(task.id) : notSubmitted());
        (task ? operator.accepted : operator.notSubmitted).push(s.id);
      } catch (err) {
        operator.refused.push(`${s.id}: ${String(err).slice(0, 200)}`);
      }
    }
    // 3. Until every remote job is finished.
    while (Date.now() < t0 + boundMs) {
      states = await all();
      if (states.every(finished)) break;
      await sleep(250);
    }
    operator.settleMs = Date.now() - t0;
    return { operator, jobs: await all() };
  } finally {
    await soniq.close();
  }
}
