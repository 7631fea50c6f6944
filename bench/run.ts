/**
 * The benchmark orchestrator: `npm run bench` (after `npm run build`; the script does both).
 *
 * In one process run it measures every selected library on every selected workload, workload
 * after workload, the libraries taking turns in an order that rotates each round, so drift on
 * the machine spreads over all of them. Each measurement gets a fresh adapter (connections,
 * pollers and timers of one never live on into the next). At the end it prints one table
 * (medians, min–max over rounds, ratios of Soniq to the best peer) and removes every schema,
 * key and file it created. With `--baseline REF` it first builds Soniq at REF in a temporary
 * folder (./baseline.ts), measures that build as two more libraries and removes the folder at
 * the end. See docs/performance.md.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { selectFactories } from "./adapters/index.js";
import { REPO_ROOT } from "./adapters/support.js";
import type { AdapterFactory } from "./adapters/types.js";
import { type Baseline, buildBaseline } from "./baseline.js";
import { type BenchConfig, loadConfig, USAGE } from "./config.js";
import { describeEnvironment, type Environment } from "./environment.js";
import { CPU_ROUNDS, calibrateCpuWork, sleep } from "./payload.js";
import { type Errors, type Results, renderTable, TABLE_LEGEND } from "./table.js";
import { drainWorkload, handlersWorkload } from "./workloads/drain.js";
import { enqueueWorkload } from "./workloads/enqueue.js";
import { fanInWorkload } from "./workloads/fan-in.js";
import { flowWorkload } from "./workloads/flow.js";
import { historyWorkload } from "./workloads/history.js";
import { latencyWorkload } from "./workloads/latency.js";
import { processWorkload } from "./workloads/process.js";
import type { MetricSpec, Sample, Workload } from "./workloads/types.js";

const ALL_WORKLOADS: Workload[] = [
  enqueueWorkload,
  drainWorkload,
  latencyWorkload,
  handlersWorkload,
  processWorkload,
  fanInWorkload,
  historyWorkload,
  flowWorkload,
];

const began = performance.now();
function log(message: string): void {
  const s = ((performance.now() - began) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`[${s}s] ${message}\n`);
}

/** The library order of round `r` (0-based): the list rotated by r. */
function orderFor(factories: AdapterFactory[], r: number): AdapterFactory[] {
  const k = r % factories.length;
  return [...factories.slice(k), ...factories.slice(0, k)];
}

function notes(
  metrics: MetricSpec[],
  factories: AdapterFactory[],
  results: Results,
  errors: Errors,
): string[] {
  const out: string[] = [];
  for (const metric of metrics) {
    for (const f of factories) {
      const error = errors[metric.key]?.[f.name];
      if (error) out.push(`- ${f.label}, ${metric.label}: ${error.split("\n")[0]}`);
      for (const sample of results[metric.key]?.[f.name] ?? []) {
        if (sample.note) out.push(`- ${f.label}, ${metric.label}: ${sample.note}`);
      }
    }
  }
  return [...new Set(out)];
}

/**
 * The tables: one for the workloads without a section of their own, then one per section under its
 * heading (only the libraries with a value in it: the others get a line saying so).
 */
function tables(
  config: BenchConfig,
  workloads: Workload[],
  factories: AdapterFactory[],
  results: Results,
  errors: Errors,
): string[] {
  const main = workloads.filter((w) => !w.section).flatMap((w) => w.metrics(config));
  const out = main.length > 0 ? [renderTable(main, factories, results, errors)] : [];
  for (const w of workloads) {
    if (!w.section) continue;
    const metrics = w.metrics(config);
    const measured = factories.filter((f) =>
      metrics.some((m) => (results[m.key]?.[f.name] ?? []).some((s) => Number.isFinite(s.value))),
    );
    const shown = measured.length > 0 ? measured : factories;
    const left = factories.filter((f) => !shown.includes(f)).map((f) => f.label);
    if (out.length > 0) out.push("");
    out.push(`### ${w.section(config)}`, "", renderTable(metrics, shown, results, errors));
    if (left.length > 0) out.push("", `Not in this table: ${left.join(", ")} (see the notes).`);
  }
  return out;
}

function report(
  config: BenchConfig,
  env: Environment,
  cpuMs: number,
  workloads: Workload[],
  factories: AdapterFactory[],
  metrics: MetricSpec[],
  results: Results,
  errors: Errors,
): string {
  const noteLines = notes(metrics, factories, results, errors);
  return [
    ...tables(config, workloads, factories, results, errors),
    "",
    TABLE_LEGEND,
    ...(noteLines.length > 0 ? ["", "Notes:", ...noteLines] : []),
    "",
    `Run: ${env.date}; ${config.rounds} round(s); scale ${config.scale}; time box ${config.timeBoxMs / 1000} s; CPU handler = ${CPU_ROUNDS} SHA-256 rounds over 4 KiB ≈ ${cpuMs.toFixed(2)} ms (ideal ≈ ${Math.round(1000 / cpuMs)} jobs/s on one core).`,
    `Machine: ${env.cpu}, ${env.cores} cores, ${env.memoryGiB} GiB; load average at start ${env.loadAverage}; fdatasync at start ${env.fdatasync}; Node ${env.node}; PostgreSQL ${env.postgres}; Redis ${env.redis}.`,
    "Versions and configurations:",
    ...factories.map(
      (f) =>
        `- ${f.label} ${f.version()}${f.isSoniq ? ` (commit ${env.soniqCommit})` : ""}: ${f.configuration}`,
    ),
  ].join("\n");
}

/**
 * One measurement; on failure (e.g. the database restarted under it: this machine is shared)
 * waits up to a minute for the library's services and tries once more.
 */
async function measure(
  workload: Workload,
  f: AdapterFactory,
  config: BenchConfig,
): Promise<{ samples: Record<string, Sample> } | { error: string }> {
  let failure: string | undefined;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const samples = await workload.run(f, { config, log });
      if (failure) {
        for (const sample of Object.values(samples)) {
          sample.note = `measured again after: ${failure.split("\n")[0]}`;
        }
      }
      return { samples };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      failure = message;
      log(`  ${f.name} ${workload.id} failed (attempt ${attempt}): ${message}`);
      if (attempt >= 2) return { error: message };
      for (let waited = 0; waited < 60 && (await f.check()) !== null; waited += 2) {
        await sleep(2000);
      }
      await sleep(1000);
    }
  }
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const config = loadConfig(argv);
  if (!existsSync(join(REPO_ROOT, "dist", "cli", "main.js"))) {
    process.stderr.write("dist/ is missing: run `npm run build` first (npm run bench does).\n");
    return 2;
  }
  if (config.baseline === undefined) return await runBench(config, undefined);
  const baseline = await buildBaseline(config.baseline, log);
  // Also on process.exit (a second Ctrl-C): removing the folder is synchronous and idempotent.
  process.once("exit", baseline.remove);
  try {
    return await runBench(config, baseline);
  } finally {
    baseline.remove();
    log(`baseline ${baseline.short}: temporary build removed`);
  }
}

/** Measures every selected library (`baseline`: the build of `--baseline`), prints the report. */
async function runBench(config: BenchConfig, baseline: Baseline | undefined): Promise<number> {
  const workloads = ALL_WORKLOADS.filter((w) => config.workloads.includes(w.id));
  let factories = selectFactories(config, baseline);
  const unavailable: string[] = [];
  for (const f of factories) {
    const problem = await f.check();
    if (problem) unavailable.push(`${f.label}: skipped (${problem})`);
  }
  for (const line of unavailable) log(line);
  factories = factories.filter((f) => !unavailable.some((u) => u.startsWith(`${f.label}:`)));
  if (factories.length === 0) {
    process.stderr.write("no library can run here\n");
    return 2;
  }

  const env = await describeEnvironment(config);
  log(`load average ${env.loadAverage}; fdatasync ${env.fdatasync}`);
  const cpuMs = calibrateCpuWork();
  const metrics = workloads.flatMap((w) => w.metrics(config));
  const results: Results = {};
  const errors: Errors = {};
  log(
    `${config.rounds} round(s), scale ${config.scale}: ${factories.map((f) => f.name).join(", ")}; workloads ${workloads.map((w) => w.id).join(", ")}`,
  );

  let interrupted = false;
  const cleanup = async () => {
    for (const f of factories) {
      await f.cleanup().catch((err) => log(`clean-up of ${f.name} failed: ${String(err)}`));
    }
  };
  process.once("SIGINT", () => {
    interrupted = true;
    log("interrupted: cleaning up after the current measurement (Ctrl-C again to abort)");
    process.once("SIGINT", () => process.exit(130));
  });

  try {
    for (const f of factories) await f.prepare();
    for (let round = 0; round < config.rounds && !interrupted; round += 1) {
      const order = orderFor(factories, round);
      for (const workload of workloads) {
        if (workload.rounds && round >= workload.rounds(config)) continue;
        for (const f of order) {
          if (interrupted) break;
          log(`round ${round + 1}/${config.rounds} · ${workload.id} · ${f.name}`);
          const outcome = await measure(workload, f, config);
          if ("samples" in outcome) {
            for (const [key, sample] of Object.entries(outcome.samples)) {
              results[key] ??= {};
              const byLib = results[key];
              byLib[f.name] ??= [];
              byLib[f.name]?.push(sample);
            }
          } else {
            for (const metric of workload.metrics(config)) {
              errors[metric.key] ??= {};
              const byLib = errors[metric.key];
              if (byLib && !byLib[f.name]) byLib[f.name] = outcome.error;
            }
          }
        }
      }
    }
  } finally {
    await cleanup();
  }

  const text = report(config, env, cpuMs, workloads, factories, metrics, results, errors);
  process.stdout.write(`\n${text}\n`);
  if (unavailable.length > 0) process.stdout.write(`\n${unavailable.join("\n")}\n`);
  if (config.markdownOut) writeFileSync(config.markdownOut, `${text}\n`);
  if (config.jsonOut) {
    const json = {
      config,
      environment: env,
      cpuWorkMs: cpuMs,
      libraries: factories.map((f) => ({
        name: f.name,
        label: f.label,
        version: f.version(),
        configuration: f.configuration,
      })),
      metrics,
      results,
      errors,
    };
    writeFileSync(config.jsonOut, `${JSON.stringify(json, null, 2)}\n`);
  }
  log(`done in ${((performance.now() - began) / 1000).toFixed(0)} s`);
  return interrupted ? 130 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(
      `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
