/** The libraries the harness can run: `LIBRARIES` and `OPTIONAL_LIBRARIES` (config.ts). */
import type { BenchConfig } from "../config.js";
import { bullMq } from "./bullmq.js";
import { graphile } from "./graphile.js";
import { pgBoss } from "./pgboss.js";
import { soniqPostgres, soniqSqlite } from "./soniq.js";
import type { AdapterFactory } from "./types.js";

export function selectFactories(config: BenchConfig): AdapterFactory[] {
  const all: Record<string, () => AdapterFactory> = {
    "soniq-pg": () => soniqPostgres(config.pgUrl),
    "soniq-sqlite": () => soniqSqlite(),
    "graphile-worker": () => graphile(config.pgUrl),
    "graphile-worker-defaults": () => graphile(config.pgUrl, "defaults"),
    "pg-boss": () => pgBoss(config.pgUrl),
    bullmq: () => bullMq(config.redisUrl),
  };
  return config.libraries.map((name) => {
    const make = all[name];
    if (!make) throw new Error(`no adapter for ${name}`);
    return make();
  });
}
