/**
 * The "waiting for a worker that can run it" lines of `soniq status` (docs/operations.md, "Jobs
 * waiting for a worker that can run them"): per queue and job name, how many due jobs no live
 * worker can run, the oldest one's wait and why, with the command that lists them. Nothing when
 * none wait.
 */
import type { WaitingForWorker } from "../admin/waiting-for-worker.js";
import { table } from "./admin-flags.js";

/** The text lines for `waiting` (empty when nothing waits). */
export function waitingForWorkerLines(waiting: readonly WaitingForWorker[]): string[] {
  if (waiting.length === 0) return [];
  const rows = [["  QUEUE", "JOB", "COUNT", "OLDEST", "REASON"]];
  for (const w of waiting) {
    rows.push([
      `  ${w.queue}`,
      w.name,
      String(w.count),
      `${Math.round(w.oldestAgeSeconds)}s`,
      w.reason,
    ]);
  }
  return [
    "waiting for a worker that can run it   → soniq jobs list --waiting-for-worker",
    table(rows),
  ];
}
