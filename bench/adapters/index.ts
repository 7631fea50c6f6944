/** The libraries the harness can run: `LIBRARIES` and `OPTIONAL_LIBRARIES` (config.ts). */
import type { Baseline } from "../baseline.js";
import type { BenchConfig } from "../config.js";
import { bullMq } from "./bullmq.js";
import { graphile } from "./graphile.js";
import { pgBoss } from "./pgboss.js";
import { baselineBuild, NO_PREFETCH, RETENTION0, soniqPostgres, soniqSqlite } from "./soniq.js";
import type { AdapterFactory } from "./types.js";

/** The factories of `config.libraries`; `baseline` is the build of `--baseline`, if given. */
export function selectFactories(config: BenchConfig, baseline?: Baseline): AdapterFactory[] {
  const baselineOnly = (make: (b: Baseline) => AdapterFactory) => () => {
    if (!baseline) throw new Error("the baseline libraries need --baseline REF");
    return make(baseline);
  };
  const all: Record<string, () => AdapterFactory> = {
    "soniq-pg": () => soniqPostgres(config.pgUrl),
    "soniq-sqlite": () => soniqSqlite(),
    "soniq-pg-prefetch0": () => soniqPostgres(config.pgUrl, NO_PREFETCH),
    "soniq-sqlite-prefetch0": () => soniqSqlite(NO_PREFETCH),
    "soniq-pg-retention0": () => soniqPostgres(config.pgUrl, RETENTION0),
    "soniq-baseline-pg": baselineOnly((b) => soniqPostgres(config.pgUrl, baselineBuild(b))),
    "soniq-baseline-pg-retention0": baselineOnly((b) =>
      soniqPostgres(config.pgUrl, baselineBuild(b, 0)),
    ),
    "soniq-baseline-sqlite": baselineOnly((b) => soniqSqlite(baselineBuild(b))),
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
