/**
 * `soniq.deadLetters`: the dead-letter queue (issue 14). List with filters (reason, queue, name,
 * time), show, replay (one, many, all matching), delete, and export as NDJSON. Entries older than
 * `deadLetterRetention` (default 30 days) are deleted by the pruner.
 */
import type { DeadLetterFilter } from "../backends/contract/index.js";
import { isSoniqError, SoniqError } from "../errors.js";
import {
  assertBulkRequest,
  type BulkOptions,
  type BulkResult,
  bulkBound,
  bulkIds,
  runBulk,
} from "./bulk.js";
import { type DeadLetterQuery, type PageOptions, toDeadLetterFilter, toPage } from "./filters.js";
import type { AdminDeps } from "./jobs-admin.js";
import { jobValuesJson } from "./json/job.js";
import { assertReplayable, replayBlocker } from "./replayable.js";
import { type DeadLetterView, deadLetterView } from "./views.js";

/** A page of dead letters, newest `deadAt` first. */
export interface DeadLetterPage {
  deadLetters: DeadLetterView[];
  nextCursor: string | null;
}

/** A bulk action on dead letters: `ids`, or everything `filter` matches. */
export interface DeadLetterBulkRequest extends BulkOptions {
  ids?: readonly string[];
  filter?: DeadLetterQuery;
}

/** See the module comment. */
export class DeadLettersAdmin {
  constructor(private readonly deps: AdminDeps) {}

  /** Dead letters matching `query`, one page. @throws SoniqError `INVALID_OPTION`. */
  async list(query: DeadLetterQuery = {}, page: PageOptions = {}): Promise<DeadLetterPage> {
    const filter = toDeadLetterFilter(query);
    const { cursor, limit } = toPage(page);
    const backend = await this.deps.backend();
    const result = await backend.admin.deadLetterList({ filter, cursor, limit });
    return { deadLetters: result.items.map(deadLetterView), nextCursor: result.nextCursor };
  }

  /** How many dead letters match `query`. */
  async count(query: DeadLetterQuery = {}): Promise<number> {
    const filter = toDeadLetterFilter(query);
    return (await this.deps.backend()).admin.deadLetterCount({ filter });
  }

  /**
   * Every dead letter counted by its reason (`max_attempts_exceeded`, `crash_loop`,
   * `dependency_failed`, …; docs/operations.md), in one read; reasons with none are absent.
   */
  async countByReason(): Promise<Record<string, number>> {
    return (await this.deps.backend()).admin.deadLetterCountByReason();
  }

  /** One entry, or null. */
  async get(id: string): Promise<DeadLetterView | null> {
    const row = await (await this.deps.backend()).deadLetterGet({ id });
    return row ? deadLetterView(row) : null;
  }

  /**
   * Moves an entry back to the queue (due now, attempts 0, `last_error` kept) and notes it on
   * the job's timeline. A job dead-lettered `dependency_failed` whose failed dependency is itself
   * in the dead-letter queue is refused: it would run at once although that dependency never
   * ended well — replay the dependency, which puts this job back to waiting for it
   * (docs/workflows.md, "Replay re-arms").
   * @throws SoniqError `NOT_FOUND`; `DEDUP_CONFLICT` when a live job holds its dedup key;
   *   `INVALID_STATE` (`details.dependencyId`) for a dependant whose failed dependency is in the
   *   dead-letter queue (nothing changed).
   */
  async replay(id: string): Promise<void> {
    const backend = await this.deps.backend();
    await assertReplayable(backend, id);
    if (!(await backend.deadLetterReplay({ id }))) {
      throw new SoniqError("NOT_FOUND", `no dead-letter job with id ${id}`);
    }
    await backend.admin.jobEventsAppend({ events: [{ jobId: id, kind: "replayed" }] });
  }

  /**
   * Replays `ids` or everything `filter` matches, in batches, guarded by `expectedCount`. An
   * entry whose dedup key a live job holds is skipped (counted in `skipped`), and so is a
   * dependant whose failed dependency is in the dead-letter queue (see {@link replay}; when the
   * same run replays that dependency, the dependant is put back to waiting by it).
   * @throws SoniqError `INVALID_OPTION`, `COUNT_MISMATCH`.
   */
  async replayMany(request: DeadLetterBulkRequest): Promise<BulkResult> {
    const backend = await this.deps.backend();
    return this.bulk(request, async (id) => {
      try {
        if ((await replayBlocker(backend, id)) !== null) return false;
        if (!(await backend.deadLetterReplay({ id }))) return false;
      } catch (err) {
        if (isSoniqError(err, "DEDUP_CONFLICT")) return false;
        throw err;
      }
      await backend.admin.jobEventsAppend({ events: [{ jobId: id, kind: "replayed" }] });
      return true;
    });
  }

  /** Deletes one entry. @throws SoniqError `NOT_FOUND`. */
  async delete(id: string): Promise<void> {
    const backend = await this.deps.backend();
    if ((await backend.admin.deadLetterDelete({ ids: [id] })) === 0) {
      throw new SoniqError("NOT_FOUND", `no dead-letter job with id ${id}`);
    }
  }

  /** Deletes `ids` or everything `filter` matches. @throws SoniqError `INVALID_OPTION`, `COUNT_MISMATCH`. */
  async deleteMany(request: DeadLetterBulkRequest): Promise<BulkResult> {
    const backend = await this.deps.backend();
    return this.bulk(
      request,
      async (id) => (await backend.admin.deadLetterDelete({ ids: [id] })) > 0,
    );
  }

  /**
   * Every entry matching `query`, newest first, page by page: for `soniq dlq export` (one JSON
   * object per line, see {@link toNdjsonLine}).
   */
  async *export(query: DeadLetterQuery = {}): AsyncGenerator<DeadLetterView> {
    let cursor: string | null = null;
    do {
      const page = await this.list(query, { cursor, limit: 500 });
      yield* page.deadLetters;
      cursor = page.nextCursor;
    } while (cursor !== null);
  }

  private async bulk(
    request: DeadLetterBulkRequest,
    act: (id: string) => Promise<boolean>,
  ): Promise<BulkResult> {
    assertBulkRequest(request, ["ids", "filter"]);
    const { ids, filter: query, ...options } = request;
    if ((ids === undefined) === (query === undefined)) {
      throw new SoniqError("INVALID_OPTION", "give either ids or filter (use filter: {} for all)");
    }
    const backend = await this.deps.backend();
    let filter: DeadLetterFilter;
    if (ids !== undefined) filter = { ids: bulkIds(ids) };
    else {
      // Bounded by the instant the action began: rows dead-lettered meanwhile are not touched.
      const checked = toDeadLetterFilter(query);
      filter = { ...checked, deadBefore: await bulkBound(() => backend.now(), checked.deadBefore) };
    }
    return runBulk(
      {
        count: () => backend.admin.deadLetterCount({ filter }),
        page: async (cursor, limit) => {
          const p = await backend.admin.deadLetterList({ filter, cursor, limit });
          return { ids: p.items.map((d) => d.id), nextCursor: p.nextCursor };
        },
      },
      options,
      act,
    );
  }
}

/**
 * One NDJSON line (no trailing newline) for an exported entry: the shape of a `dlq list --json`
 * row (admin/json/job.ts, camelCase, times as ISO 8601).
 */
export function toNdjsonLine(entry: DeadLetterView): string {
  return JSON.stringify(jobValuesJson(entry));
}
