/**
 * What the run ran on: machine, Node, PostgreSQL and Redis versions, Soniq's commit, the load
 * average and the day's `fdatasync` time (./fdatasync.ts) at the start of the run.
 */
import { execFileSync } from "node:child_process";
import { cpus, loadavg, totalmem } from "node:os";
import { Redis } from "ioredis";
import pg from "pg";
import { REPO_ROOT } from "./adapters/support.js";
import type { BenchConfig } from "./config.js";
import { measureFdatasync } from "./fdatasync.js";

export interface Environment {
  date: string;
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  postgres: string;
  redis: string;
  soniqCommit: string;
  loadAverage: string;
  /** `fdatasync` at the start: microseconds per 8 kB write, and how it was measured. */
  fdatasync: string;
}

async function postgresVersion(url: string): Promise<{ text: string; dataDirectory?: string }> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query<{ v: string; sc: string; fs: string }>(
      "SELECT current_setting('server_version') AS v, current_setting('synchronous_commit') AS sc, current_setting('fsync') AS fs",
    );
    const row = rows[0];
    // Readable by superusers and pg_read_all_settings only: without it the probe's place is unsaid.
    const dir = await client
      .query<{ d: string }>("SELECT current_setting('data_directory') AS d")
      .then((r) => r.rows[0]?.d)
      .catch(() => undefined);
    return {
      text: row ? `${row.v} (synchronous_commit=${row.sc}, fsync=${row.fs})` : "unknown",
      dataDirectory: dir,
    };
  } catch {
    return { text: "not reachable" };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function redisVersion(url: string): Promise<string> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    const info = await redis.info("server");
    const persistence = await redis.config("GET", "appendonly");
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? "unknown";
    return `${version} (appendonly=${(persistence as string[])[1] ?? "?"})`;
  } catch {
    return "not reachable";
  } finally {
    redis.disconnect();
  }
}

function gitCommit(): string {
  // A run from an exported snapshot (no .git) can say which commit it is.
  if (process.env.BENCH_SONIQ_COMMIT) return process.env.BENCH_SONIQ_COMMIT;
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    }).trim();
    return dirty ? `${head} + uncommitted changes in src/` : head;
  } catch {
    return "unknown";
  }
}

export async function describeEnvironment(config: BenchConfig): Promise<Environment> {
  const postgres = await postgresVersion(config.pgUrl);
  const loadAverage = loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  const sync = await measureFdatasync(postgres.dataDirectory);
  return {
    date: new Date().toISOString(),
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    postgres: postgres.text,
    redis: await redisVersion(config.redisUrl),
    soniqCommit: gitCommit(),
    loadAverage,
    fdatasync: `${sync.micros.toFixed(0)} µs (${sync.how})`,
  };
}
