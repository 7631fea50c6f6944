/**
 * The answers of single-object actions as JSON: `soniq jobs cancel|retry|delete <id>` and
 * `soniq dlq replay|delete <id>` (`{ id, state }`, an array for several ids), `soniq remote
 * resolve|poll-now` and the dashboard's `POST /api/remote/:id/resolve|poll-now`, `soniq schedules
 * run|pause|resume|remove` and the dashboard's `POST /api/schedules/:id/run-now`.
 */
import { z } from "zod";

/** One job's action by id: its state after it (`cancelled`, `cancel_requested`, `queued`, …). */
export const jobActionJsonSchema = z.object({ id: z.string(), state: z.string() });
/** One job's action by id, as JSON. */
export type JobActionJson = z.infer<typeof jobActionJsonSchema>;

/** An action on one id (an object) or several (an array, in the order given). */
export const jobActionsJsonSchema = z.union([jobActionJsonSchema, z.array(jobActionJsonSchema)]);

/** `remote resolve`: the job and the resolution recorded (`accepted`, `not_submitted`, `failed`). */
export const remoteResolveJsonSchema = z.object({ jobId: z.string(), resolution: z.string() });
/** `remote resolve` as JSON. */
export type RemoteResolveJson = z.infer<typeof remoteResolveJsonSchema>;

/** `remote poll-now`: the job is due at the next worker tick. */
export const remotePollNowJsonSchema = z.object({ jobId: z.string(), due: z.literal("now") });
/** `remote poll-now` as JSON. */
export type RemotePollNowJson = z.infer<typeof remotePollNowJsonSchema>;

/** `schedules run` / `POST /api/schedules/:id/run-now`: the schedule and the job it enqueued. */
export const scheduleRunNowJsonSchema = z.object({ id: z.string(), jobId: z.string() });
/** A manual run as JSON. */
export type ScheduleRunNowJson = z.infer<typeof scheduleRunNowJsonSchema>;

/** `schedules pause|resume|remove`: the schedule and what was done (one flag, true). */
export const scheduleActionJsonSchema = z.union([
  z.object({ id: z.string(), paused: z.literal(true) }),
  z.object({ id: z.string(), resumed: z.literal(true) }),
  z.object({ id: z.string(), removed: z.literal(true) }),
]);
/** `schedules pause|resume|remove` as JSON. */
export type ScheduleActionJson = z.infer<typeof scheduleActionJsonSchema>;
