/**
 * How many PostgreSQL connections a no-op drain opens, and when: the bench's own drain (its
 * adapters, in process) while a sampler reads `pg_stat_activity` every `--every` ms and keeps the
 * backends whose client socket belongs to this process (../cpu-meter.ts's match by TCP port; the
 * sampler's and the CPU meter's own backends left out). `npm run build` first, then:
 *
 *   BENCH_PG_URL=postgres://…/db node --import tsx bench/profile/pool-connections.ts
 *        [--jobs 10000] [--inflight 10,100] [--libs soniq-pg,soniq-pg-retention0,graphile-worker]
 *        [--repeat 1] [--every 10] [--trace] [--baseline REF]
 *
 * With `--baseline REF`, Soniq built at REF (../baseline.ts) is measured too, interleaved: name its
 * libraries in `--libs` (`soniq-baseline-pg`, `soniq-baseline-pg-retention0`).
 *
 * Per drain: jobs/s, database and worker CPU per job (as the bench's rows), the most backends seen
 * at once, the distinct backends seen over the drain (each one a new server process that paid its
 * warm-up), and with `--trace` the time each backend was first seen (ms after the worker start)
 * with what it was running then.
 */
import { createRequire } from "node:module";
import { loadavg } from "node:os";
import { join } from "node:path";
import { selectFactories } from "../adapters/index.js";
import { REPO_ROOT } from "../adapters/support.js";
import { type Baseline, buildBaseline } from "../baseline.js";
import { loadConfig } from "../config.js";
import { localPortsOf } from "../cpu-meter.js";
import { runDrain } from "../workloads/drain.js";

interface ActivityRow {
  pid: number;
  port: number | null;
  query: string | null;
}
interface PgClient {
  connect(): Promise<void>;
  query<R>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  end(): Promise<void>;
}

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

const jobs = Number(flag("jobs", "10000"));
const caps = flag("inflight", "10,100").split(",").map(Number);
const libs = flag("libs", "soniq-pg,soniq-pg-retention0,graphile-worker");
const repeat = Number(flag("repeat", "1"));
const every = Number(flag("every", "10"));
const trace = process.argv.includes("--trace");
const baselineRef = process.argv.includes("--baseline") ? flag("baseline", "main") : undefined;
const config = loadConfig([
  "--only",
  libs,
  ...(baselineRef === undefined ? [] : ["--baseline", baselineRef]),
]);
const baseline: Baseline | undefined =
  baselineRef === undefined
    ? undefined
    : await buildBaseline(baselineRef, (line) => process.stdout.write(`${line}\n`));
const factories = selectFactories(config, baseline);
const require = createRequire(join(REPO_ROOT, "package.json"));
const pg = require("pg") as { Client: new (o: { connectionString: string }) => PgClient };

/** Samples this process's backends until stopped. */
async function sampler() {
  const client = new pg.Client({ connectionString: config.pgUrl });
  await client.connect();
  const own = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
  const firstSeen = new Map<number, { at: number; query: string }>();
  let most = 0;
  let stopAt = 0;
  let start = performance.now();
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query<ActivityRow>(
        "SELECT pid, client_port AS port, query FROM pg_stat_activity WHERE client_port IS NOT NULL AND pid <> $1",
        [own],
      );
      const ports = localPortsOf(process.pid);
      let now = 0;
      for (const row of rows) {
        if (row.port === null || !ports.has(row.port)) continue;
        // The CPU meter's backend runs only its own reading.
        if (row.query?.includes("pg_current_wal_lsn")) continue;
        now += 1;
        if (!firstSeen.has(row.pid)) {
          firstSeen.set(row.pid, {
            at: performance.now() - start,
            query: (row.query ?? "").replace(/\s+/g, " ").slice(0, 90),
          });
        }
      }
      if (stopAt === 0) most = Math.max(most, now);
      await new Promise((resolve) => setTimeout(resolve, every));
    }
  })();
  return {
    started() {
      start = performance.now();
      firstSeen.clear();
      most = 0;
    },
    async stop() {
      stopAt = performance.now();
      running = false;
      await loop;
      await client.end();
      return { most, firstSeen };
    },
  };
}

process.stdout.write(
  `no-op drains of ${jobs} jobs; load average at start ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}\n`,
);
for (const factory of factories) await factory.prepare();
try {
  for (let r = 0; r < repeat; r += 1) {
    for (const cap of caps) {
      for (const factory of factories) {
        const s = await sampler();
        const boxed = { ...config, timeBoxMs: 600_000 };
        let seen = { most: 0, firstSeen: new Map<number, { at: number; query: string }>() };
        const result = await runDrain(factory, boxed, jobs, cap, "noop", {
          before: () => s.started(),
          after: async () => {
            seen = await s.stop();
          },
        });
        process.stdout.write(
          `${factory.label}, ${cap} in flight: ${result.sample.value.toFixed(0)} jobs/s, database CPU ${result.databaseMicrosPerJob?.toFixed(1)} µs/job, worker CPU ${result.workerMicrosPerJob.toFixed(1)} µs/job; backends at once ≤ ${seen.most}, distinct ${seen.firstSeen.size}; load ${loadavg()[0]?.toFixed(2)}\n`,
        );
        if (trace) {
          for (const [pid, first] of [...seen.firstSeen].sort((a, b) => a[1].at - b[1].at)) {
            process.stdout.write(
              `  ${first.at.toFixed(0).padStart(6)} ms  ${pid}  ${first.query}\n`,
            );
          }
        }
      }
    }
  }
} finally {
  for (const factory of factories) await factory.cleanup();
  baseline?.remove();
}
process.exit(0);
