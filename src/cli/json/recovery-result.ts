/** `soniq recover --json`: the jobs one recovery pass requeued, dead-lettered and cancelled. */
import { z } from "zod";

/** One job a recovery pass acted on. */
export const recoveredJobJsonSchema = z.object({
  id: z.string(),
  name: z.string(),
  queue: z.string(),
  /** The worker incarnation that held it (no longer live). */
  previousOwner: z.string().nullable(),
  /** Its interruption count after this recovery. */
  interruptions: z.number().int(),
  /** Whether this recovery charged an interruption (its start was durably known). */
  charged: z.boolean(),
});

/** `soniq recover --json`. */
export const recoverJsonSchema = z.object({
  /** Requeued: queued, due now. */
  requeued: z.array(recoveredJobJsonSchema),
  /** Moved to the dead-letter queue as `crash_loop` (too many interruptions). */
  deadLettered: z.array(recoveredJobJsonSchema),
  /** Finalised as cancelled: an operator had asked to cancel them. */
  cancelled: z.array(recoveredJobJsonSchema),
});
/** `soniq recover --json` (see {@link recoverJsonSchema}). */
export type RecoverJson = z.infer<typeof recoverJsonSchema>;
