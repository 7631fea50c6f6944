/**
 * The soak's run log: one JSON line per event of a run, appended by the worker processes'
 * handlers (chaos/soak-jobs.ts, chaos/soak-digest.ts on a thread) to the file named by
 * `SOAK_RUN_LOG`, read back by chaos/soak.ts. An append of one short line is atomic on Linux, so
 * processes and threads share one file. Lines carry no timestamps beyond `t` (milliseconds since
 * the epoch, when written): the soak reads pick-up latency from `waitMs` of starts.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";

/** Arguments of every soak job (one shape, so the producer can mix kinds freely). */
export interface SoakArgs {
  /** How long an async run waits, in milliseconds. */
  ms?: number;
  /** A flaky job that fails every attempt (it ends in the dead-letter queue). */
  doomed?: boolean;
  /** How long a snooze job snoozes its first run, in seconds. */
  snoozeSeconds?: number;
  /** How many rounds of hashing a sync job does (64 KiB each). */
  rounds?: number;
}

/** One event of a run. `start` carries the wait from due to start, in milliseconds. */
export type RunEvent =
  | { id: string; kind: "start"; waitMs: number }
  | { id: string; kind: "completed" | "failed" | "snoozed" };

/** A run-log line as read back: the event, when it was written and by which process. */
export type RunLine = RunEvent & { t: number; pid: number };

/** Appends `event` to the run log named by `SOAK_RUN_LOG` (nothing when it is not set). */
export function appendRun(event: RunEvent): void {
  const file = process.env.SOAK_RUN_LOG;
  if (!file) return;
  appendFileSync(file, `${JSON.stringify({ ...event, t: Date.now(), pid: process.pid })}\n`);
}

/**
 * The lines of a run log written at or after byte `from`; returns them with the offset to read
 * from next time (a half-written last line is left for the next read).
 */
export function readRunLog(file: string, from = 0): { lines: RunLine[]; next: number } {
  if (!existsSync(file)) return { lines: [], next: from };
  const buf = readFileSync(file);
  const end = buf.lastIndexOf(0x0a) + 1;
  if (end <= from) return { lines: [], next: from };
  const lines = buf
    .subarray(from, end)
    .toString("utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as RunLine);
  return { lines, next: end };
}
