/**
 * `soniq jobs list --waiting-for-worker`: the due queued jobs no live worker can run (docs/
 * operations.md, "Jobs waiting for a worker that can run them"), newest first. It reads
 * `soniq.jobs.waitingForWorker()`, then one page of `soniq.jobs.list` per waiting queue and name
 * (status `queued`, with the other filter flags), keeping the jobs of the waiting versions. One
 * page only: `--cursor` is refused with it.
 */
import type { JobQuery, PageOptions } from "../admin/filters.js";
import type { JobPage } from "../admin/jobs-admin.js";
import type { JobListView } from "../admin/views.js";
import { SoniqError } from "../errors.js";
import type { Soniq } from "../soniq.js";

/** Default rows of the listing (the list's own default). */
const DEFAULT_LIMIT = 50;

/**
 * At most `limit` (default 50) waiting jobs matching `query` (its `queue` and `name`, when given,
 * narrow the waiting ones; its `status` must be absent or `queued`), newest first.
 * @throws SoniqError `INVALID_INPUT` with a cursor or another status.
 */
export async function waitingJobsPage(
  soniq: Soniq,
  query: JobQuery,
  page: PageOptions,
): Promise<JobPage> {
  if (page.cursor !== undefined && page.cursor !== null) {
    throw new SoniqError("INVALID_INPUT", "--waiting-for-worker lists one page: drop --cursor");
  }
  const status = query.status === undefined ? [] : [query.status].flat();
  if (status.some((s) => s !== "queued")) {
    throw new SoniqError(
      "INVALID_INPUT",
      "--waiting-for-worker lists queued (due) jobs only: drop --status or give --status queued",
    );
  }
  const only = (value: string | readonly string[] | undefined, item: string) =>
    value === undefined || [value].flat().includes(item);
  const limit = page.limit ?? DEFAULT_LIMIT;
  const listPage = { limit };
  const jobs: JobListView[] = [];
  for (const entry of await soniq.jobs.waitingForWorker()) {
    if (!only(query.queue, entry.queue) || !only(query.name, entry.name)) continue;
    const found = await soniq.jobs.list(
      { ...query, status: "queued", queue: entry.queue, name: entry.name },
      listPage,
    );
    jobs.push(...found.jobs.filter((j) => entry.versions.includes(j.version)));
  }
  jobs.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  return { jobs: jobs.slice(0, limit), nextCursor: null };
}
