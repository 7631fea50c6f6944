/**
 * A graphile-worker worker process: `run()` with the benchmark configuration
 * (`BENCH_GRAPHILE_VARIANT=defaults`: its default configuration) and its own
 * signal handling (the documented default: on SIGTERM it shuts down gracefully, waiting for
 * in-flight jobs, then re-raises the signal).
 */
import { run } from "graphile-worker";
import { GRAPHILE_TASK, graphileRunnerOptions } from "../adapters/graphile-config.js";
import type { BenchPayload } from "../payload.js";
import { childConcurrency, childHandler } from "./protocol.js";

const url = process.env.BENCH_PG_URL;
if (!url) throw new Error("BENCH_PG_URL is not set");

const handle = childHandler();
const runner = await run(
  graphileRunnerOptions(
    url,
    childConcurrency(),
    { [GRAPHILE_TASK]: async (payload) => handle(payload as BenchPayload) },
    false,
    process.env.BENCH_GRAPHILE_VARIANT === "defaults" ? "defaults" : "fastest",
  ),
);
await runner.promise;
