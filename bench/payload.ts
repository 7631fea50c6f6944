/**
 * What every benchmark job carries and the work its handler does. Identical for every library:
 * the payload is a small JSON object, and the handler kinds below are the only work measured.
 */
import { createHash } from "node:crypto";

/** The job payload. `i` numbers the job within one measurement; `k` picks child-process work. */
export interface BenchPayload {
  i: number;
  /** Child worker processes only: `noop` (default), `sleep` for `ms`, or `ping` (report start). */
  k?: "noop" | "sleep" | "ping";
  ms?: number;
}

/** A handler as the workloads give it to an adapter. */
export type BenchHandler = (payload: BenchPayload) => Promise<void> | void;

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms);
  });

const CPU_BLOCK = Buffer.alloc(4096, 7);

/** Rounds of hashing the CPU-bound handler does (a fixed amount of work, the same everywhere). */
export const CPU_ROUNDS = 150;

/**
 * The CPU-bound handler's work: `CPU_ROUNDS` chained SHA-256 digests of a 4 KiB block
 * (about 1–2 ms on one core of this machine; `calibrateCpuWork` measures it).
 */
export function cpuWork(seed: number): string {
  let digest = Buffer.from(String(seed));
  for (let round = 0; round < CPU_ROUNDS; round += 1) {
    digest = createHash("sha256").update(digest).update(CPU_BLOCK).digest();
  }
  return digest.toString("hex");
}

/** Milliseconds one `cpuWork` call takes here (median of 200 after a warm-up). */
export function calibrateCpuWork(): number {
  for (let i = 0; i < 50; i += 1) cpuWork(i);
  const times: number[] = [];
  for (let i = 0; i < 200; i += 1) {
    const start = performance.now();
    cpuWork(i);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[100] ?? 0;
}

/** `count` payloads numbered from `start`. */
export function payloads(count: number, start = 0): BenchPayload[] {
  return Array.from({ length: count }, (_, n) => ({ i: start + n }));
}
