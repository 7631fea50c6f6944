/** What the run ran on: machine, Node, PostgreSQL and Redis versions, Soniq's commit. */
import { execFileSync } from "node:child_process";
import { cpus, loadavg, totalmem } from "node:os";
import { Redis } from "ioredis";
import pg from "pg";
import { REPO_ROOT } from "./adapters/support.js";
import type { BenchConfig } from "./config.js";

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
}

async function postgresVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query<{ v: string; sc: string; fs: string }>(
      "SELECT current_setting('server_version') AS v, current_setting('synchronous_commit') AS sc, current_setting('fsync') AS fs",
    );
    const row = rows[0];
    return row ? `${row.v} (synchronous_commit=${row.sc}, fsync=${row.fs})` : "unknown";
  } catch {
    return "not reachable";
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
  return {
    date: new Date().toISOString(),
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    postgres: await postgresVersion(config.pgUrl),
    redis: await redisVersion(config.redisUrl),
    soniqCommit: gitCommit(),
    loadAverage: loadavg()
      .map((x) => x.toFixed(2))
      .join(" "),
  };
}
