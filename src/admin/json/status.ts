/**
 * `soniq status --json`: job counts by state (queued split into due now and `scheduled`), remote
 * jobs awaiting and frozen, the same counts per queue with its paused flag and `maxRunning`, the
 * live workers (the shared worker view) and how many dead ones are not stopped.
 */
import { z } from "zod";
import { keyFlowJsonSchema } from "./flow.js";
import { instantJsonSchema } from "./instant.js";
import { workerJsonSchema } from "./worker.js";

/** One queue's row in `status --json`: its configuration and its jobs by state. */
export const statusQueueJsonSchema = z.object({
  name: z.string(),
  paused: z.boolean(),
  /**
   * When a timed pause ends (a handler's `ctx.rateLimited` with scope `queue`,
   * docs/flow-control.md); null for an operator's pause or a queue not paused.
   */
  pausedUntil: instantJsonSchema.nullable(),
  /** Most processing jobs at once across every worker; null = no limit. */
  maxRunning: z.number().int().nullable(),
  /** Queued and due now. */
  queued: z.number().int(),
  /** Queued, due later. */
  scheduled: z.number().int(),
  processing: z.number().int(),
  done: z.number().int(),
  cancelled: z.number().int(),
  deadLetter: z.number().int(),
  /** Remote jobs being submitted (not counted in `processing`). */
  remoteSubmitting: z.number().int(),
  /** Remote jobs accepted by their service and polled (not counted in `processing`). */
  remoteAccepted: z.number().int(),
  /** Remote jobs frozen for an operator or `reconcile` (not counted in `processing`). */
  remoteFrozen: z.number().int(),
  /** Due jobs held back by a per-key concurrency limit (docs/flow-control.md). */
  heldByConcurrency: z.number().int(),
  /** Due jobs held back by a rate limit or a handler's key pause (docs/flow-control.md). */
  heldByRate: z.number().int(),
  /** When the first job held by rate may start; null: none held by rate. */
  nextWindowAt: instantJsonSchema.nullable(),
});
/** One queue's row in `status --json`. */
export type StatusQueueJson = z.infer<typeof statusQueueJsonSchema>;

/** Due queued jobs of one queue and name that no live worker can run (`soniq.jobs.waitingForWorker()`). */
export const waitingForWorkerJsonSchema = z.object({
  queue: z.string(),
  /** The job name. */
  name: z.string(),
  /** How many due queued jobs wait. */
  count: z.number().int(),
  /** **Seconds** since the oldest of them became due (database clock). */
  oldestAgeSeconds: z.number(),
  reason: z.enum(["no_worker_for_queue", "unknown_name", "version_too_new"]),
  /** The job versions that wait, ascending. */
  versions: z.array(z.number().int()),
});

/** One key's rate-limit state in `status --json` (docs/flow-control.md). */
export const rateKeyJsonSchema = z.object({
  key: z.string(),
  /** Starts of the key still inside their rate-limit window. */
  startsInWindow: z.number().int(),
  /** When the earliest of them leaves its window (a start frees then); null: none. */
  nextWindowAt: instantJsonSchema.nullable(),
  /** When a handler's pause of the key (`ctx.rateLimited`, scope `key`) ends; null: not paused. */
  pausedUntil: instantJsonSchema.nullable(),
});

/** `soniq status --json`. */
export const statusJsonSchema = z.object({
  /** Live and finished jobs plus dead letters. */
  total: z.number().int(),
  /** Queued and due now. */
  queued: z.number().int(),
  /** Queued, due later. */
  scheduled: z.number().int(),
  processing: z.number().int(),
  done: z.number().int(),
  deadLetter: z.number().int(),
  cancelled: z.number().int(),
  /** Remote jobs being submitted (not counted in `processing`). */
  remoteSubmitting: z.number().int(),
  /** Remote jobs handed to polling: accepted by their service (not counted in `processing`). */
  remoteAwaiting: z.number().int(),
  /** Remote jobs frozen for an operator or `reconcile` (not counted in `processing`). */
  remoteFrozen: z.number().int(),
  queues: z.array(statusQueueJsonSchema),
  /** The live workers. */
  workers: z.array(workerJsonSchema),
  /** Workers whose heartbeat is stale and that did not stop cleanly. */
  deadWorkers: z.number().int(),
  /** Due jobs no live worker can run, per queue and name (docs/operations.md). */
  waitingForWorker: z.array(waitingForWorkerJsonSchema),
  /**
   * Rate-limit state: keys with starts in their window or paused by a handler, most starts first
   * (at most 20; docs/flow-control.md).
   */
  rateKeys: z.array(rateKeyJsonSchema),
  /**
   * Keys with queued or running jobs, most running first, then most held (at most 10 over every
   * queue; docs/flow-control.md, "Seeing what a limit holds back").
   */
  topKeys: z.array(keyFlowJsonSchema),
});
/** `soniq status --json` (see {@link statusJsonSchema}). */
export type StatusJson = z.infer<typeof statusJsonSchema>;
