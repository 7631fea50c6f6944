/**
 * The child side of the worker-process protocol: every benchmark worker process (Soniq's CLI
 * and the peers' runners) runs jobs with `childHandler()`, which reports on standard output:
 *
 *   S <i>      a `ping` or `sleep` job started (the parent times SIGTERM against these)
 *   N <count>  every 100th finished `noop` job (the parent waits for the drain with these)
 *
 * Standard output is a pipe, which Node writes synchronously on Linux, so a line is out before
 * the handler returns.
 */
import type { BenchPayload } from "../payload.js";

export function childHandler(): (payload: BenchPayload) => Promise<void> {
  let finished = 0;
  return async (payload) => {
    if (payload.k === "ping") {
      process.stdout.write(`S ${payload.i}\n`);
      return;
    }
    if (payload.k === "sleep") {
      process.stdout.write(`S ${payload.i}\n`);
      await new Promise((resolve) => setTimeout(resolve, payload.ms ?? 0));
      return;
    }
    finished += 1;
    if (finished % 100 === 0) process.stdout.write(`N ${finished}\n`);
  };
}

/** The environment variable carrying a child's concurrency (peers' runners; Soniq uses --concurrency). */
export function childConcurrency(): number {
  const n = Number(process.env.BENCH_CONCURRENCY ?? "10");
  if (!Number.isInteger(n) || n < 1) throw new Error("BENCH_CONCURRENCY must be an integer >= 1");
  return n;
}
