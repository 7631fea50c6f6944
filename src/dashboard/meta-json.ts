/**
 * The dashboard's own JSON answers — the routes that have no CLI counterpart (`GET /api/me`,
 * `GET /api/overview`, `GET /api/jobs/count`, `GET /api/health/live`) and the small answers of
 * single-object writes (`{ state }`, `{ ok: true }`) — as zod schemas, so that
 * docs/dashboard.openapi.json describes them from the same source as the shared views
 * (src/dashboard/openapi-schemas.ts; issue 27 item 2). camelCase keys, like every JSON view
 * (docs/operations.md, "JSON output"); values keep their spelling.
 */
import { z } from "zod";
import { waitingForWorkerJsonSchema } from "../admin/json/index.js";

/** `GET /api/me`: who the request is, what it may do, and the UI's settings. */
export const meJsonSchema = z.object({
  /** The user's name as `auth` returned it. */
  user: z.string(),
  /** The write actions this user's access grants (`jobs.cancel`, `queues.pause`, …). */
  actions: z.array(z.string()),
  /** The token every write must send back (header `x-csrf-token`). */
  csrfToken: z.string(),
  /** Arguments and results are left out of previews (downloads only). */
  hideArgs: z.boolean(),
  /** The largest preview of a value, in UTF-8 **bytes**. */
  maxPreviewBytes: z.number().int(),
});

/** One window of the overview (whole minutes, from the job counters). */
const windowJsonSchema = z.object({
  /** Jobs that finished `done` in the window. */
  done: z.number().int(),
  /** Jobs moved to the dead-letter queue in the window. */
  deadLettered: z.number().int(),
  /** `deadLettered / (done + deadLettered)`, 0 when both are 0. */
  failureRate: z.number(),
});

/** `GET /api/overview` (src/dashboard/overview.ts). */
export const overviewJsonSchema = z.object({
  /** Counts per queue × status (`scheduled` apart from `queued`; dead letters as `dead_letter`). */
  counts: z.array(z.object({ queue: z.string(), status: z.string(), count: z.number().int() })),
  windows: z.object({ "1h": windowJsonSchema, "24h": windowJsonSchema }),
  queues: z.array(
    z.object({
      name: z.string(),
      /** **Seconds** since the oldest due queued job became due; 0 when none is due. */
      oldestDueAgeSeconds: z.number(),
      paused: z.boolean(),
    }),
  ),
  /** Dead letters per reason; reasons not listed one by one are summed as `other`. */
  deadLettersByReason: z.record(z.string(), z.number().int()),
  /** Workers per shutdown state (`STALE` for a live-looking row whose heartbeat stopped). */
  workersByState: z.record(z.string(), z.number().int()),
  waitingForWorker: z.array(waitingForWorkerJsonSchema),
  /** Remote jobs by phase; `frozen` ones wait for an operator. */
  remote: z.object({
    submitting: z.number().int(),
    awaiting: z.number().int(),
    frozen: z.number().int(),
  }),
  warnings: z.array(z.object({ kind: z.string(), message: z.string() })),
});

/** `GET /api/jobs/count`: how many jobs match the query (`soniq.jobs.count`). */
export const jobCountJsonSchema = z.object({ count: z.number().int() });

/** `POST /api/jobs/:id/cancel`: what the cancel did (`cancelled`, `requested`, `already_requested`). */
export const cancelStateJsonSchema = z.object({
  state: z.enum(["cancelled", "requested", "already_requested"]),
});

/**
 * The answer of a write that has nothing more to say (`POST /api/jobs/:id/retry`,
 * `DELETE /api/jobs/:id`, `POST /api/dead-letter/:id/replay`, `DELETE /api/dead-letter/:id`) and of
 * `GET /api/health/live`.
 */
export const okJsonSchema = z.object({ ok: z.literal(true) });
