/**
 * What `soniq/testing`'s assertions read: every job the in-memory store holds (live, kept finished
 * and dead-lettered), in enqueue order, and how a list of them is written in a failure message.
 */
import type { JobListStatus } from "../backends/contract/index.js";
import type { Soniq } from "../soniq.js";
import { describeValue } from "./args-match.js";

/** A job as the assertions see it: the stored row, with its arguments parsed from JSON. */
export interface EnqueuedJob<TArgs = unknown> {
  /** The job's id (what `enqueue` returned). */
  id: string;
  /** Its registered name. */
  name: string;
  /** Its queue. */
  queue: string;
  /** Its arguments as stored (after the job's schema, parsed from JSON: dates are ISO text). */
  args: TArgs;
  /**
   * `queued` (due now on the test clock), `scheduled` (due later), `processing`, `done`,
   * `cancelled`, or `dead_letter` (moved to the dead-letter queue).
   */
  status: JobListStatus | "dead_letter";
  /** Lower runs first. */
  priority: number;
  /** Outcomes recorded so far (success, failure, `job_timeout`). */
  attempts: number;
  /** Runs allowed before the dead-letter queue. */
  maxAttempts: number;
  /** When it is (or was) due, on the test clock. */
  scheduledAt: Date;
  /** When it was enqueued, on the test clock. */
  createdAt: Date;
  /** Its deduplication key, or null. */
  dedupKey: string | null;
  /** The last failure's message, or null. */
  lastError: string | null;
}

/** Rows per page while reading the store. */
const PAGE = 1000;

/**
 * Every job `soniq`'s store holds, optionally of one name, ordered by id (enqueue order: ids are
 * time-ordered), dead letters included.
 */
export async function readEnqueued(soniq: Soniq, name?: string): Promise<EnqueuedJob[]> {
  const query = name === undefined ? {} : { name };
  const out: EnqueuedJob[] = [];
  let cursor: string | null = null;
  do {
    const page = await soniq.jobs.list(query, { cursor, limit: PAGE });
    for (const job of page.jobs) {
      out.push({
        id: job.id,
        name: job.name,
        queue: job.queue,
        args: job.args,
        status: job.status,
        priority: job.priority,
        attempts: job.attempts,
        maxAttempts: job.maxAttempts,
        scheduledAt: job.scheduledAt,
        createdAt: job.createdAt,
        dedupKey: job.dedupKey,
        lastError: job.lastError,
      });
    }
    cursor = page.nextCursor;
  } while (cursor !== null);
  do {
    const page = await soniq.deadLetters.list(query, { cursor, limit: PAGE });
    for (const dead of page.deadLetters) {
      out.push({
        id: dead.id,
        name: dead.name,
        queue: dead.queue,
        args: dead.args,
        status: "dead_letter",
        priority: dead.priority,
        attempts: dead.attempts,
        maxAttempts: dead.maxAttempts,
        scheduledAt: dead.scheduledAt,
        createdAt: dead.createdAt,
        dedupKey: dead.dedupKey,
        lastError: dead.lastError,
      });
    }
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Most jobs a failure message lists. */
const LISTED = 20;

/** `jobs` as the indented lines of a failure message, the first {@link LISTED} of them. */
export function listJobs(jobs: readonly EnqueuedJob[]): string {
  if (jobs.length === 0) return "  (none)";
  const lines = jobs
    .slice(0, LISTED)
    .map(
      (job) =>
        `  - ${job.name} ${describeValue(job.args)} [${job.status}${job.queue === "default" ? "" : `, queue ${job.queue}`}, id ${job.id}]`,
    );
  if (jobs.length > LISTED) lines.push(`  … and ${jobs.length - LISTED} more`);
  return lines.join("\n");
}
