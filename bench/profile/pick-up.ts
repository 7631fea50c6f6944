/**
 * Idle pick-up on PostgreSQL with and without hand-off at enqueue, interleaved sample by sample so
 * both modes see the same machine load:
 *
 *   node --import tsx bench/profile/pick-up.ts [--samples 60] [--pause-ms 20-220]
 *
 * One in-process worker (10 slots, the documented defaults otherwise) on a fresh schema; each
 * sample waits a random pause (the connections go idle), enqueues one job with `job.enqueue` and
 * times the call to the handler's start. Modes alternate: `hand-off` (as shipped) and `claim` (the
 * backend's hand-off desk refuses every reservation, so the job is queued and claimed as before).
 * Prints per mode, after a few warm-up samples: latency p50/p90/p99 (ms), this process's CPU per
 * pick-up (µs, median, enqueue call to the job's `job_done`, `process.cpuUsage()`), and the
 * statements the process sent per pick-up on any connection but the LISTEN one (counted from the
 * enqueue to the next sample, so the claim a freed slot triggers and the heartbeats count too). Runs the
 * sources through tsx (not `dist/`); latency moves with the machine's load, statement counts do not.
 */
import { performance } from "node:perf_hooks";
import pg from "pg";
import { pino } from "pino";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { Soniq } from "../../src/index.js";

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

const samples = Number(flag("samples", "60"));
const [pauseMin, pauseMax] = flag("pause-ms", "20-220").split("-").map(Number) as [number, number];
const url = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = "bench_pick_up";

const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);

const backend = new PostgresBackend({ connectionString: url, schema, poolSize: 10 });
await backend.setup();
const soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
let started: (() => void) | undefined;
const job = soniq.job({
  name: "bench.pick_up",
  handler: async () => {
    started?.();
  },
});
const worker = soniq.worker({ concurrency: 10 });
await worker.start();

// Every statement on every connection of the process but the LISTEN connection's own.
let statements = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const config = args[0] as { text?: string } | string;
  const text = typeof config === "string" ? config : (config?.text ?? "");
  if (!/^\s*(UN)?LISTEN/i.test(text)) statements += 1;
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

const reserve = backend.handOff.reserve.bind(backend.handOff);
type Mode = "hand-off" | "claim";
const results: Record<Mode, { ms: number[]; cpuUs: number[]; statements: number[] }> = {
  "hand-off": { ms: [], cpuUs: [], statements: [] },
  claim: { ms: [], cpuUs: [], statements: [] },
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const warmUp = 6;
for (let i = 0; i < samples * 2 + warmUp; i += 1) {
  const mode: Mode = i % 2 === 0 ? "hand-off" : "claim";
  backend.handOff.reserve = mode === "hand-off" ? reserve : () => undefined;
  await sleep(pauseMin + Math.random() * (pauseMax - pauseMin));
  const statementsBefore = statements;
  const done = new Promise<void>((resolve) => {
    const off = soniq.events.on("job_done", () => {
      off();
      resolve();
    });
  });
  const handlerStarted = new Promise<number>((resolve) => {
    started = () => resolve(performance.now());
  });
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await job.enqueue({});
  const t1 = await handlerStarted;
  await done;
  const used = process.cpuUsage(cpu);
  await sleep(30); // the claim a freed slot triggers
  if (i < warmUp) continue;
  results[mode].ms.push(t1 - t0);
  results[mode].cpuUs.push(used.user + used.system);
  results[mode].statements.push(statements - statementsBefore);
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

console.log(
  `idle pick-up on PostgreSQL, ${samples} samples per mode, pauses ${pauseMin}-${pauseMax} ms`,
);
for (const mode of ["hand-off", "claim"] as const) {
  const r = results[mode];
  console.log(
    `${mode.padEnd(8)}  p50 ${pct(r.ms, 50).toFixed(2)} ms  p90 ${pct(r.ms, 90).toFixed(2)} ms  p99 ${pct(r.ms, 99).toFixed(2)} ms  CPU p50 ${pct(r.cpuUs, 50).toFixed(0)} µs/pick-up  statements ${mean(r.statements).toFixed(2)}/pick-up`,
  );
}
await worker.stop();
await soniq.close();
await backend.close();
await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
await admin.end();
