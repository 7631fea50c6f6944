/**
 * A worker incarnation as JSON — the one shape `soniq workers --json`, the workers of
 * `soniq status --json` and the dashboard's `GET /api/workers` and `GET /api/workers/:id` share:
 * the admin API's `WorkerDetail` with camelCase keys and instants as ISO-8601 text.
 */
import { z } from "zod";
import type { WorkerDetail } from "../../backends/contract/index.js";
import { instantJsonSchema, isoOrNull } from "./instant.js";

/** One worker as JSON. */
export const workerJsonSchema = z.object({
  /** Fresh id per process start. */
  id: z.string(),
  hostname: z.string(),
  pid: z.number().int(),
  /** The queues it claims from; null for all. */
  queues: z.array(z.string()).nullable(),
  /** Job slots. */
  concurrency: z.number().int(),
  /** `running`, `draining` or `stopped`, as stored. */
  status: z.enum(["running", "draining", "stopped"]),
  startedAt: instantJsonSchema,
  lastHeartbeatAt: instantJsonSchema,
  stoppedAt: instantJsonSchema.nullable(),
  /** The heartbeat timeout it declared, in seconds; null for a worker of an older version. */
  heartbeatTimeoutSeconds: z.number().nullable(),
  /** `RUNNING`, `DRAINING`, `FORCE_TIMEOUT_PATH`, `WAIT_FOR_THREAD` or `STOPPED`. */
  shutdownState: z.string(),
  drainStartedAt: instantJsonSchema.nullable(),
  deadlineAt: instantJsonSchema.nullable(),
  /** Seconds since its last heartbeat, database clock. */
  heartbeatAgeSeconds: z.number(),
  /** Not stopped and heartbeat within its declared timeout. */
  live: z.boolean(),
  /** Ids of the processing jobs it owns. */
  inFlight: z.array(z.string()),
});
/** One worker as JSON (see {@link workerJsonSchema}). */
export type WorkerJson = z.infer<typeof workerJsonSchema>;

/** A worker as JSON. */
export function workerJson(w: WorkerDetail): WorkerJson {
  return {
    id: w.id,
    hostname: w.hostname,
    pid: w.pid,
    queues: w.queues === null ? null : [...w.queues],
    concurrency: w.concurrency,
    status: w.status,
    startedAt: w.startedAt.toISOString(),
    lastHeartbeatAt: w.lastHeartbeatAt.toISOString(),
    stoppedAt: isoOrNull(w.stoppedAt),
    heartbeatTimeoutSeconds: w.heartbeatTimeoutSeconds,
    shutdownState: w.shutdownState,
    drainStartedAt: isoOrNull(w.drainStartedAt),
    deadlineAt: isoOrNull(w.deadlineAt),
    heartbeatAgeSeconds: w.heartbeatAgeSeconds,
    live: w.live,
    inFlight: [...w.inFlight],
  };
}
