/**
 * The chaos producer, a child process of chaos/run.ts (so that a SQLite lock held by a stopped
 * worker never stalls the orchestrator's timers). It enqueues `CHAOS_JOBS` `chaos.work` jobs (one
 * in ten `chaos.limited`, defined here for its flow-control key and limits) in
 * batches spread evenly over `CHAOS_ENQUEUE_SECONDS`, and appends "<n> <id>" for each
 * acknowledged job to `CHAOS_IDS_FILE`. Every job has the dedup key `chaos-<n>`, so a batch
 * retried after an ambiguous failure (e.g. the PostgreSQL restart) returns the ids already
 * inserted instead of inserting twice.
 *
 * With `CHAOS_REMOTE_JOBS` (> 0) it also enqueues that many remote jobs
 * (chaos/remote-workload.ts), spread over the same ticks, dedup key `chaos-remote-<n>`, and appends
 * "<n> <id>" for each to `CHAOS_REMOTE_IDS_FILE`.
 *
 * With `CHAOS_FLOWS` (> 0) it also enqueues that many flows and batches over the same window
 * (chaos/flows.ts), recorded in `CHAOS_FLOWS_FILE`.
 */
import { appendFileSync } from "node:fs";
import { Soniq } from "soniq";
import { produceFlows } from "./flows.js";
import { jobSpec, LIMITED_FLOW, LIMITED_JOB, type WorkArgs } from "./plan.js";
import { remoteSpec } from "./remote-workload.js";

function env(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set`);
  return value;
}

const total = Number(env("CHAOS_JOBS"));
const seed = Number(env("CHAOS_SEED"));
const seconds = Number(env("CHAOS_ENQUEUE_SECONDS"));
const idsFile = env("CHAOS_IDS_FILE");
const schema = process.env.SONIQ_SCHEMA;
const remoteTotal = Number(process.env.CHAOS_REMOTE_JOBS ?? 0);
const remoteIdsFile = remoteTotal > 0 ? env("CHAOS_REMOTE_IDS_FILE") : "";

const soniq = new Soniq({
  databaseUrl: env("SONIQ_DATABASE_URL"),
  ...(schema ? { schema } : {}),
  env: {},
  logLevel: "silent",
  rejectUnknownJobs: false,
  poolSize: 2,
});

// The flow-limited job's key and limits are computed at enqueue, from its definition.
soniq.job<WorkArgs>({ name: LIMITED_JOB, ...LIMITED_FLOW, handler: async () => undefined });

const TICK_MS = 100;
const ticks = Math.max(1, Math.floor((seconds * 1000) / TICK_MS));
const perTick = Math.max(1, Math.ceil(total / ticks));
const began = Date.now();
let failures = 0;
/** Remote jobs per tick, so that they are spread over the same window as the plain ones. */
const remotePerTick = Math.max(1, Math.ceil(remoteTotal / Math.ceil(total / perTick)));
let remoteNext = 0;
const flowsTotal = Number(process.env.CHAOS_FLOWS ?? 0);
const flowsDone =
  flowsTotal > 0
    ? produceFlows({ soniq, seed, count: flowsTotal, seconds, file: env("CHAOS_FLOWS_FILE") })
    : Promise.resolve();

/** Enqueues `items` until it lands (a retry returns the same ids: dedup keys). */
async function enqueueDurably(
  items: Array<{
    name: string;
    args: unknown;
    options: { dedupKey: string; maxAttempts?: number };
  }>,
): Promise<string[]> {
  for (let i = 0; ; i++) {
    try {
      return await soniq.enqueueMany(items);
    } catch (err) {
      failures += 1;
      if (i % 10 === 0)
        process.stderr.write(`producer: enqueue failed, retrying: ${String(err)}\n`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** i)));
    }
  }
}

for (let start = 0, tick = 0; start < total; start += perTick, tick++) {
  const wait = began + tick * TICK_MS - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  const items = [];
  for (let n = start; n < Math.min(total, start + perTick); n++) {
    const args = jobSpec(seed, n);
    items.push({
      name: args.flow ? LIMITED_JOB : "chaos.work",
      args,
      options: { dedupKey: `chaos-${n}`, maxAttempts: 5 },
    });
  }
  const ids = await enqueueDurably(items);
  appendFileSync(idsFile, ids.map((id, k) => `${start + k} ${id}\n`).join(""));
  if (remoteNext < remoteTotal) {
    const first = remoteNext;
    const remote = [];
    for (; remoteNext < Math.min(remoteTotal, first + remotePerTick); remoteNext++) {
      const spec = remoteSpec(seed, remoteNext);
      remote.push({ ...spec, options: { dedupKey: `chaos-remote-${remoteNext}` } });
    }
    const remoteIds = await enqueueDurably(remote);
    appendFileSync(remoteIdsFile, remoteIds.map((id, k) => `${first + k} ${id}\n`).join(""));
  }
}
await flowsDone;
await soniq.close();
process.stderr.write(
  `producer: ${total} jobs, ${remoteTotal} remote jobs and ${flowsTotal} flows and batches enqueued (${failures} failed tries retried)\n`,
);
