/**
 * The chaos producer, a child process of chaos/run.ts (so that a SQLite lock held by a stopped
 * worker never stalls the orchestrator's timers). It enqueues `CHAOS_JOBS` `chaos.work` jobs in
 * batches spread evenly over `CHAOS_ENQUEUE_SECONDS`, and appends "<n> <id>" for each
 * acknowledged job to `CHAOS_IDS_FILE`. Every job has the dedup key `chaos-<n>`, so a batch
 * retried after an ambiguous failure (e.g. the PostgreSQL restart) returns the ids already
 * inserted instead of inserting twice.
 */
import { appendFileSync } from "node:fs";
import { Soniq } from "soniq";
import { jobSpec } from "./plan.js";

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

const soniq = new Soniq({
  databaseUrl: env("SONIQ_DATABASE_URL"),
  ...(schema ? { schema } : {}),
  env: {},
  logLevel: "silent",
  rejectUnknownJobs: false,
  poolSize: 2,
});

const TICK_MS = 100;
const ticks = Math.max(1, Math.floor((seconds * 1000) / TICK_MS));
const perTick = Math.max(1, Math.ceil(total / ticks));
const began = Date.now();
let failures = 0;

for (let start = 0, tick = 0; start < total; start += perTick, tick++) {
  const wait = began + tick * TICK_MS - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  const items = [];
  for (let n = start; n < Math.min(total, start + perTick); n++) {
    items.push({
      name: "chaos.work",
      args: jobSpec(seed, n),
      options: { dedupKey: `chaos-${n}`, maxAttempts: 5 },
    });
  }
  for (let i = 0; ; i++) {
    try {
      const ids = await soniq.enqueueMany(items);
      appendFileSync(idsFile, ids.map((id, k) => `${start + k} ${id}\n`).join(""));
      break;
    } catch (err) {
      failures += 1;
      if (i % 10 === 0)
        process.stderr.write(`producer: enqueue failed, retrying: ${String(err)}\n`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** i)));
    }
  }
}
await soniq.close();
process.stderr.write(`producer: ${total} jobs enqueued (${failures} failed tries retried)\n`);
