/**
 * A queue as JSON — the one shape `soniq queues list|pause|resume|set --json` and the dashboard's
 * `GET /api/queues`, `POST /api/queues/:name/pause|resume` and `PATCH /api/queues/:name` share:
 * the admin API's `QueueInfo` with camelCase keys and instants as ISO-8601 text.
 */
import { z } from "zod";
import type { QueueInfo } from "../../backends/contract/index.js";
import { queueFlowJsonSchema } from "./flow.js";
import { instantJsonSchema, isoOrNull } from "./instant.js";

/** One queue as JSON. */
export const queueJsonSchema = z.object({
  name: z.string(),
  paused: z.boolean(),
  /**
   * When a timed pause ends (a handler's `ctx.rateLimited` with scope `queue`); null for an
   * operator's pause or a queue not paused.
   */
  pausedUntil: instantJsonSchema.nullable(),
  /** Most processing jobs at once across every worker; null = no limit. */
  maxRunning: z.number().int().nullable(),
  /**
   * **Seconds** a due job may wait with no live worker able to run it before it is dead-lettered
   * (`no_capable_worker`); null = never.
   */
  unclaimableAfter: z.number().nullable(),
  /** Queued jobs (due or not). */
  queued: z.number().int(),
  processing: z.number().int(),
  /** Seconds since the oldest due queued job became due (0 when none), database clock. */
  oldestDueAgeSeconds: z.number(),
  /** When the configuration last changed; null for a queue with no configuration row. */
  updatedAt: instantJsonSchema.nullable(),
});
/** One queue as JSON (see {@link queueJsonSchema}). */
export type QueueJson = z.infer<typeof queueJsonSchema>;

/** A queue as JSON. */
export function queueJson(q: QueueInfo): QueueJson {
  return {
    name: q.name,
    paused: q.paused,
    pausedUntil: isoOrNull(q.pausedUntil),
    maxRunning: q.maxRunning,
    unclaimableAfter: q.unclaimableAfter,
    queued: q.queued,
    processing: q.processing,
    oldestDueAgeSeconds: q.oldestDueAgeSeconds,
    updatedAt: isoOrNull(q.updatedAt),
  };
}

/**
 * `soniq queues show <queue> --json`: the queue as {@link queueJsonSchema} with what its
 * flow-control limits hold back (`flow`; nothing held and no keys for a queue without keyed jobs).
 */
export const queueDetailJsonSchema = queueJsonSchema.extend({
  /** Its keyed jobs: held by concurrency and by rate, the next window, its top keys. */
  flow: queueFlowJsonSchema,
});
/** `soniq queues show --json` (see {@link queueDetailJsonSchema}). */
export type QueueDetailJson = z.infer<typeof queueDetailJsonSchema>;
