/**
 * Collects the progress the worker's running jobs reported since the last heartbeat (async
 * handlers set it on their entry; sync handlers write it into a shared buffer on their thread), so
 * the heartbeat writes it in the same round trip (contract: admin-store.ts `workerBeat`). A report
 * that could not be written is offered again by the next beat.
 */
import type { ProgressReport } from "../backends/contract/index.js";
import { readProgress } from "../jobs/progress.js";
import type { InFlight, InFlightTable } from "./in-flight.js";

/** The reports to write now, and how to mark them written once the beat succeeded. */
export interface PendingProgress {
  reports: ProgressReport[];
  /** Marks the collected reports as written (call after the beat succeeded). */
  written(): void;
}

/** Takes the news of every entry of `table`. */
export function collectProgress(table: InFlightTable): PendingProgress {
  const reports: ProgressReport[] = [];
  const done: Array<() => void> = [];
  for (const entry of table.values()) {
    const report = newsOf(entry, done);
    if (report) reports.push(report);
  }
  return {
    reports,
    written: () => {
      for (const mark of done) mark();
    },
  };
}

function newsOf(entry: InFlight, done: Array<() => void>): ProgressReport | null {
  if (entry.progressBuffer) {
    const read = readProgress(entry.progressBuffer);
    if (read === null || read.seq === entry.progressSeq) return null;
    done.push(() => {
      entry.progressSeq = Math.max(entry.progressSeq, read.seq);
    });
    return { id: entry.job.id, owner: entry.owner, fraction: read.fraction, message: read.message };
  }
  const value = entry.progress;
  if (!entry.progressDirty || value === null) return null;
  done.push(() => {
    // A newer report made meanwhile stays dirty for the next beat.
    if (entry.progress === value) entry.progressDirty = false;
  });
  return { id: entry.job.id, owner: entry.owner, fraction: value.fraction, message: value.message };
}
