/**
 * `soniq.queues`: each queue's configuration and counts (issue 14). A write (`pause`, `resume`,
 * `set`) to a queue that has never had a job, a schedule, a setting or a job definition is a
 * typo until proven otherwise: refused with `NOT_FOUND` and a "did you mean" hint unless
 * `{ create: true }` (issue 27). `pause` stops claims from a
 * queue in every process within one wake-up (the claim reads the queue's row; LISTEN/NOTIFY on
 * PostgreSQL wakes workers at `resume`, other backends' workers see it at their next poll);
 * pausing never touches jobs already running. `maxRunning` is enforced in the claim, so it holds
 * across every worker process.
 */
import {
  HISTORY_MAX_WINDOW_SECONDS,
  type QueueHistory,
  type QueueInfo,
  type RateKeyInfo,
} from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import { assertQueue } from "../jobs/enqueue-options.js";
import { valueText } from "../value-text.js";
import { closestName } from "./did-you-mean.js";
import type { AdminDeps } from "./jobs-admin.js";
import { type QueueFlow, queueFlows } from "./key-flow.js";

/** Settings of {@link QueuesAdmin.set}. */
export interface QueueSettings {
  paused?: boolean;
  /** Most jobs of the queue processing at once across every worker (1–100000); null: no limit. */
  maxRunning?: number | null;
  /**
   * **Seconds** (1–31 536 000) a due job of the queue may wait with no live worker able to run it
   * (unknown name, or a version newer than any live worker's) before the maintenance leader moves
   * it to the dead-letter queue with reason `no_capable_worker`; null: never (the default). Counted
   * from when the job became due and, at the same time, from when the current leader first saw
   * no live worker able to run it (docs/operations.md, "Jobs waiting for a worker that can run
   * them").
   */
  unclaimableAfter?: number | null;
}

/** The longest `unclaimableAfter`, in seconds (365 days). */
export const UNCLAIMABLE_AFTER_MAX_SECONDS = 31_536_000;

/** Options of {@link QueuesAdmin.history}. */
export interface QueueHistoryOptions {
  /** One queue; left out or null: every queue summed. */
  queue?: string | null;
  /** How far back, in **seconds**: 60 to 86 400 (24 h, the default). */
  windowSeconds?: number;
}

/** Options of {@link QueuesAdmin.flow}. */
export interface QueueFlowOptions {
  /** One queue; left out or null: every queue with keyed jobs. */
  queue?: string | null;
  /** Keys listed per queue, most running first: 0 to 1000 (default 10). */
  topKeys?: number;
}

/** Options of a queue write ({@link QueuesAdmin.pause}, `resume`, `set`). */
export interface QueueWriteOptions {
  /**
   * Configure a queue nothing knows yet (no job, schedule, setting or definition uses it), e.g.
   * to pause it before its first job. Default false: such a name is refused as a likely typo.
   */
  create?: boolean;
}

/** See the module comment. */
export class QueuesAdmin {
  /**
   * @param deps.declaredQueues - the queues this instance's job definitions name (known before
   *   their first job).
   */
  constructor(private readonly deps: AdminDeps & { declaredQueues?: () => Iterable<string> }) {}

  /** Every queue that has jobs or a configuration, by name, with its counts. */
  async list(): Promise<QueueInfo[]> {
    return (await this.deps.backend()).admin.queueList({});
  }

  /**
   * Rate-limit state per key (docs/flow-control.md): keys with starts in their window or paused
   * by a handler's `ctx.rateLimited(ms, { scope: "key" })`, most starts first, at most `limit`
   * (default 20).
   * @throws SoniqError `INVALID_OPTION` unless `limit` is an integer from 1 to 1000.
   */
  async rateKeys(limit = 20): Promise<RateKeyInfo[]> {
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new SoniqError(
        "INVALID_OPTION",
        `rateKeys: limit must be an integer from 1 to 1000, got ${String(limit)}`,
      );
    }
    return (await this.deps.backend()).admin.rateKeyList({ limit });
  }

  /**
   * What flow-control limits hold back (docs/flow-control.md, "Seeing what a limit holds back"),
   * per queue with keyed jobs queued or running (by name): its keys' due jobs held by a
   * concurrency limit and by a rate limit (or a handler's key pause), the next window, and its
   * top keys with their running counts. Computed on read from one grouped read of the keyed
   * rows (`AdminStore.keyFlowList`); a queue without keyed jobs is absent.
   * @throws SoniqError `INVALID_OPTION` for an unknown option or `topKeys` outside 0–1000;
   * `INVALID_ENQUEUE_OPTION` for a bad queue name.
   */
  async flow(options: QueueFlowOptions = {}): Promise<QueueFlow[]> {
    const unknown = Object.keys(options).filter((k) => k !== "queue" && k !== "topKeys");
    if (unknown.length > 0) {
      throw new SoniqError("INVALID_OPTION", `unknown flow option(s) ${unknown.join(", ")}`);
    }
    const topKeys = options.topKeys ?? 10;
    if (!Number.isInteger(topKeys) || topKeys < 0 || topKeys > 1000) {
      throw new SoniqError(
        "INVALID_OPTION",
        `topKeys must be an integer from 0 to 1000; got ${valueText(topKeys)}`,
      );
    }
    const queue = options.queue ?? null;
    if (queue !== null) assertQueue(queue);
    const rows = await (await this.deps.backend()).admin.keyFlowList({ queue });
    return queueFlows(rows, topKeys);
  }

  /**
   * Per-minute history over the last `windowSeconds` (default 24 h), for one queue or all: jobs
   * done, failed attempts retried, jobs dead-lettered and cancelled per minute, and the mean wait
   * from due to start (seconds) of the jobs done that minute. Read from the job counters only
   * (docs/backends.md, "Counting without scanning"), so it costs the same at any history size.
   * Minutes with no event are left out of `points`. Contract: `AdminStore.queueHistory`.
   * @throws SoniqError `INVALID_OPTION` for a window outside 60–86 400 s or an unknown option;
   * `INVALID_ENQUEUE_OPTION` for a bad queue name.
   */
  async history(options: QueueHistoryOptions = {}): Promise<QueueHistory> {
    const unknown = Object.keys(options).filter((k) => k !== "queue" && k !== "windowSeconds");
    if (unknown.length > 0) {
      throw new SoniqError("INVALID_OPTION", `unknown history option(s) ${unknown.join(", ")}`);
    }
    const windowSeconds = options.windowSeconds ?? HISTORY_MAX_WINDOW_SECONDS;
    if (
      typeof windowSeconds !== "number" ||
      !Number.isFinite(windowSeconds) ||
      windowSeconds < 60 ||
      windowSeconds > HISTORY_MAX_WINDOW_SECONDS
    ) {
      throw new SoniqError(
        "INVALID_OPTION",
        `windowSeconds must be a number from 60 to ${HISTORY_MAX_WINDOW_SECONDS}; got ${valueText(windowSeconds)}`,
      );
    }
    const queue = options.queue ?? null;
    if (queue !== null) assertQueue(queue);
    return (await this.deps.backend()).admin.queueHistory({ queue, windowSeconds });
  }

  /**
   * Pauses `name`: no worker claims from it until {@link resume}. Running jobs go on.
   * @throws as {@link set}.
   */
  pause(name: string, options: QueueWriteOptions = {}): Promise<QueueInfo> {
    return this.set(name, { paused: true }, options);
  }

  /**
   * Resumes `name` and wakes its workers.
   * @throws as {@link set}.
   */
  resume(name: string, options: QueueWriteOptions = {}): Promise<QueueInfo> {
    return this.set(name, { paused: false }, options);
  }

  /**
   * Every queue name known to this store and instance: queues with jobs (live rows and finished
   * counters) or a configuration row (the queue list), schedules' queues, and the queues of this
   * instance's job definitions. Reads no job history.
   */
  async knownNames(): Promise<Set<string>> {
    const backend = await this.deps.backend();
    const [queues, schedules] = await Promise.all([
      backend.admin.queueList({}),
      backend.scheduleList(),
    ]);
    return new Set([
      ...queues.map((q) => q.name),
      ...schedules.map((s) => s.queue),
      ...(this.deps.declaredQueues?.() ?? []),
    ]);
  }

  /**
   * Changes a queue's configuration (fields left out keep their value).
   * @throws SoniqError `INVALID_ENQUEUE_OPTION` for a bad queue name; `INVALID_OPTION` for a bad
   * setting; `NOT_FOUND` (with a "did you mean" hint when a close name is known) for a queue
   * nothing knows ({@link knownNames}) unless `options.create`.
   */
  async set(
    name: string,
    settings: QueueSettings,
    options: QueueWriteOptions = {},
  ): Promise<QueueInfo> {
    assertQueue(name);
    const unknown = Object.keys(settings).filter(
      (k) => k !== "paused" && k !== "maxRunning" && k !== "unclaimableAfter",
    );
    if (unknown.length > 0) {
      throw new SoniqError("INVALID_OPTION", `unknown queue setting(s) ${unknown.join(", ")}`);
    }
    if (settings.paused !== undefined && typeof settings.paused !== "boolean") {
      throw new SoniqError("INVALID_OPTION", "paused must be true or false");
    }
    const max = settings.maxRunning;
    if (
      max !== undefined &&
      max !== null &&
      !(Number.isInteger(max) && max >= 1 && max <= 100_000)
    ) {
      throw new SoniqError(
        "INVALID_OPTION",
        `maxRunning must be an integer from 1 to 100000, or null for no limit; got ${valueText(max)}`,
      );
    }
    const after = settings.unclaimableAfter;
    if (
      after !== undefined &&
      after !== null &&
      !(Number.isInteger(after) && after >= 1 && after <= UNCLAIMABLE_AFTER_MAX_SECONDS)
    ) {
      throw new SoniqError(
        "INVALID_OPTION",
        `unclaimableAfter must be a whole number of seconds from 1 to ${UNCLAIMABLE_AFTER_MAX_SECONDS}, or null for never; got ${valueText(after)}`,
      );
    }
    if (options.create !== true) {
      const known = await this.knownNames();
      if (!known.has(name)) {
        const close = closestName(name, known);
        throw new SoniqError(
          "NOT_FOUND",
          `no queue "${name}": it has never had a job, a schedule or a setting${close === null ? "" : ` (did you mean "${close}"?)`}; to configure it before its first job, pass --create (API: { create: true })`,
          { details: { queue: name, ...(close === null ? {} : { didYouMean: close }) } },
        );
      }
    }
    return (await this.deps.backend()).admin.queueSet({
      name,
      ...(settings.paused === undefined ? {} : { paused: settings.paused }),
      ...(max === undefined ? {} : { maxRunning: max }),
      ...(after === undefined ? {} : { unclaimableAfter: after }),
    });
  }
}
