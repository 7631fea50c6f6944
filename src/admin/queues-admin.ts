/**
 * `soniq.queues`: each queue's configuration and counts (issue 14). `pause` stops claims from a
 * queue in every process within one wake-up (the claim reads the queue's row; LISTEN/NOTIFY on
 * PostgreSQL wakes workers at `resume`, other backends' workers see it at their next poll);
 * pausing never touches jobs already running. `maxRunning` is enforced in the claim, so it holds
 * across every worker process.
 */
import {
  HISTORY_MAX_WINDOW_SECONDS,
  type QueueHistory,
  type QueueInfo,
} from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import { assertQueue } from "../jobs/enqueue-options.js";
import type { AdminDeps } from "./jobs-admin.js";

/** Settings of {@link QueuesAdmin.set}. */
export interface QueueSettings {
  paused?: boolean;
  /** Most jobs of the queue processing at once across every worker (1–100000); null: no limit. */
  maxRunning?: number | null;
}

/** Options of {@link QueuesAdmin.history}. */
export interface QueueHistoryOptions {
  /** One queue; left out or null: every queue summed. */
  queue?: string | null;
  /** How far back, in **seconds**: 60 to 86 400 (24 h, the default). */
  windowSeconds?: number;
}

/** See the module comment. */
export class QueuesAdmin {
  constructor(private readonly deps: AdminDeps) {}

  /** Every queue that has jobs or a configuration, by name, with its counts. */
  async list(): Promise<QueueInfo[]> {
    return (await this.deps.backend()).admin.queueList({});
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
        `windowSeconds must be a number from 60 to ${HISTORY_MAX_WINDOW_SECONDS}; got ${String(windowSeconds)}`,
      );
    }
    const queue = options.queue ?? null;
    if (queue !== null) assertQueue(queue);
    return (await this.deps.backend()).admin.queueHistory({ queue, windowSeconds });
  }

  /** Pauses `name`: no worker claims from it until {@link resume}. Running jobs go on. */
  pause(name: string): Promise<QueueInfo> {
    return this.set(name, { paused: true });
  }

  /** Resumes `name` and wakes its workers. */
  resume(name: string): Promise<QueueInfo> {
    return this.set(name, { paused: false });
  }

  /**
   * Changes a queue's configuration (fields left out keep their value).
   * @throws SoniqError `INVALID_ENQUEUE_OPTION` for a bad queue name; `INVALID_OPTION` for a bad
   * setting.
   */
  async set(name: string, settings: QueueSettings): Promise<QueueInfo> {
    assertQueue(name);
    const unknown = Object.keys(settings).filter((k) => k !== "paused" && k !== "maxRunning");
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
        `maxRunning must be an integer from 1 to 100000, or null for no limit; got ${String(max)}`,
      );
    }
    return (await this.deps.backend()).admin.queueSet({
      name,
      ...(settings.paused === undefined ? {} : { paused: settings.paused }),
      ...(max === undefined ? {} : { maxRunning: max }),
    });
  }
}
