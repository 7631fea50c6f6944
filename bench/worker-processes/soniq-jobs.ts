/**
 * The module given to `soniq worker` (node dist/cli/main.js worker <this file>) by the SIGTERM
 * and RSS workloads (and by the profiling script). The database comes from
 * BENCH_SONIQ_DATABASE_URL (BENCH_SONIQ_LOG_LEVEL overrides the level, for profiling); the jobs
 * are the same as in process, with the child-process handler of ./protocol.ts.
 */
import { Soniq } from "soniq";
import { SONIQ_JOB, soniqOptions } from "../adapters/soniq-config.js";
import type { BenchPayload } from "../payload.js";
import { childHandler } from "./protocol.js";

const url = process.env.BENCH_SONIQ_DATABASE_URL;
if (!url) throw new Error("BENCH_SONIQ_DATABASE_URL is not set");

export const soniq = new Soniq(soniqOptions(url, process.env.BENCH_SONIQ_LOG_LEVEL ?? "warn"));

const handle = childHandler();
soniq.job<BenchPayload, void>({ name: SONIQ_JOB, handler: (payload) => handle(payload) });
