/**
 * What flow-control limits hold back, as JSON (docs/flow-control.md, "Seeing what a limit holds
 * back"): one key's counts and one queue's totals with its top keys. Shared by `soniq queues show
 * --json`, `soniq status --json` and the dashboard's `GET /api/flow`.
 */
import { z } from "zod";
import type { KeyFlow, QueueFlow } from "../key-flow.js";
import { instantJsonSchema, isoOrNull } from "./instant.js";

/** One key's jobs in one queue as JSON. */
export const keyFlowJsonSchema = z.object({
  queue: z.string(),
  key: z.string(),
  /** `processing` jobs of the key in every queue (what its concurrency limit counts). */
  running: z.number().int(),
  /** Queued jobs of the key in this queue that are due now. */
  due: z.number().int(),
  /** The key's concurrency limit; null: none. */
  concurrencyLimit: z.number().int().nullable(),
  /** The key's rate limit (starts per window); null: none. */
  rateLimit: z.number().int().nullable(),
  /** Starts of the key inside their rate-limit window. */
  startsInWindow: z.number().int(),
  /** Due jobs held back because the key runs `concurrencyLimit` jobs. */
  heldByConcurrency: z.number().int(),
  /** Due jobs held back by the rate limit or a handler's pause of the key. */
  heldByRate: z.number().int(),
  /** When the first job held by rate may start; null: none held by rate. */
  nextWindowAt: instantJsonSchema.nullable(),
  /** When a handler's pause of the key ends; null: not paused. */
  pausedUntil: instantJsonSchema.nullable(),
});
/** One key's jobs in one queue as JSON (see {@link keyFlowJsonSchema}). */
export type KeyFlowJson = z.infer<typeof keyFlowJsonSchema>;

/** One queue's keyed jobs as JSON: totals and its top keys. */
export const queueFlowJsonSchema = z.object({
  queue: z.string(),
  /** Keys with queued or processing jobs in the queue. */
  keys: z.number().int(),
  /** Due jobs held back by a concurrency limit. */
  heldByConcurrency: z.number().int(),
  /** Due jobs held back by a rate limit or a handler's key pause. */
  heldByRate: z.number().int(),
  /** When the first job held by rate may start; null: none held by rate. */
  nextWindowAt: instantJsonSchema.nullable(),
  /** Its keys with the most running jobs first, then the most held. */
  topKeys: z.array(keyFlowJsonSchema),
});
/** One queue's keyed jobs as JSON (see {@link queueFlowJsonSchema}). */
export type QueueFlowJson = z.infer<typeof queueFlowJsonSchema>;

/** A key's flow as JSON. */
export function keyFlowJson(k: KeyFlow): KeyFlowJson {
  return {
    queue: k.queue,
    key: k.key,
    running: k.running,
    due: k.due,
    concurrencyLimit: k.concurrencyLimit,
    rateLimit: k.rateLimit,
    startsInWindow: k.startsInWindow,
    heldByConcurrency: k.heldByConcurrency,
    heldByRate: k.heldByRate,
    nextWindowAt: isoOrNull(k.nextWindowAt),
    pausedUntil: isoOrNull(k.pausedUntil),
  };
}

/** A queue's flow as JSON. */
export function queueFlowJson(f: QueueFlow): QueueFlowJson {
  return {
    queue: f.queue,
    keys: f.keys,
    heldByConcurrency: f.heldByConcurrency,
    heldByRate: f.heldByRate,
    nextWindowAt: isoOrNull(f.nextWindowAt),
    topKeys: f.topKeys.map(keyFlowJson),
  };
}

/** The flow of a queue without keyed jobs (nothing held, no keys). */
export function emptyQueueFlow(queue: string): QueueFlow {
  return { queue, keys: 0, heldByConcurrency: 0, heldByRate: 0, nextWindowAt: null, topKeys: [] };
}
