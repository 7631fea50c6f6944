/**
 * Which job tables a filtered read must look at (docs/backends.md, "Two tables: live jobs and
 * finished jobs"): live jobs (`queued`, `processing`) are in `soniq_jobs`, finished ones (`done`,
 * `cancelled`) in `soniq_finished_jobs`. A listing or count reads only the tables its filter can
 * match, so a filter on live states never walks the finished history.
 */
import type { JobFilter } from "../contract/admin-store.js";

/** The tables a read covers: live jobs, finished jobs, or both. */
export type JobTables = "live" | "finished" | "all";

/** The statuses kept in the live table (`scheduled`: a queued job not yet due). */
const LIVE: ReadonlySet<string> = new Set(["queued", "scheduled", "processing"]);

/**
 * The tables `filter` can match: by its statuses when given (an empty list matches nothing and
 * reads the live table only); a finish-time bound matches finished jobs only; else both.
 */
export function jobTablesFor(filter: JobFilter): JobTables {
  const finishBound = filter.finishedAfter != null || filter.finishedBefore != null;
  if (filter.status) {
    const live = filter.status.some((s) => LIVE.has(s));
    const finished = filter.status.some((s) => !LIVE.has(s));
    if (finished && (finishBound || !live)) return "finished";
    return finished ? "all" : "live";
  }
  return finishBound ? "finished" : "all";
}

/**
 * Whether the counters can answer a count of `filter` exactly (docs/backends.md, "Counting
 * without scanning"): when it filters by status and queue only. The live table is then counted
 * (it holds live jobs only) and the finished jobs kept come from `soniq_job_counts`, so the count
 * costs the same at any history size. Any other filter counts the rows it matches.
 */
export function countableByCounters(filter: JobFilter): boolean {
  return Object.entries(filter).every(
    ([key, value]) => value === undefined || key === "status" || key === "queue",
  );
}
