/**
 * The module given to `soniq worker` (node dist/cli/main.js worker <this file>) by the SIGTERM
 * and RSS workloads (and by the profiling script). The database comes from
 * BENCH_SONIQ_DATABASE_URL, the PostgreSQL schema from BENCH_SONIQ_SCHEMA (BENCH_SONIQ_LOG_LEVEL
 * overrides the level, for profiling; BENCH_SONIQ_PREFETCH sets `prefetch`, BENCH_SONIQ_RESULT_RETENTION `resultRetention`); the jobs are the same as in process, with the
 * child-process handler of ./protocol.ts. For a `--baseline` build, BENCH_SONIQ_DIST names that
 * build's dist/index.js, so the instance is the baseline's own (the one its CLI runs).
 */
import { pathToFileURL } from "node:url";
import { SONIQ_JOB, soniqOptions } from "../adapters/soniq-config.js";
import type { BenchPayload } from "../payload.js";
import { childHandler } from "./protocol.js";

type SoniqModule = typeof import("soniq");

const url = process.env.BENCH_SONIQ_DATABASE_URL;
if (!url) throw new Error("BENCH_SONIQ_DATABASE_URL is not set");
const dist = process.env.BENCH_SONIQ_DIST;
const { Soniq } = (
  dist ? await import(pathToFileURL(dist).href) : await import("soniq")
) as SoniqModule;

const prefetch = process.env.BENCH_SONIQ_PREFETCH;
const retention = process.env.BENCH_SONIQ_RESULT_RETENTION;
export const soniq = new Soniq(
  soniqOptions(
    url,
    process.env.BENCH_SONIQ_LOG_LEVEL ?? "warn",
    process.env.BENCH_SONIQ_SCHEMA,
    prefetch === undefined ? undefined : Number(prefetch),
    retention === undefined ? undefined : Number(retention),
  ),
);

const handle = childHandler();
soniq.job<BenchPayload, void>({ name: SONIQ_JOB, handler: (payload) => handle(payload) });
