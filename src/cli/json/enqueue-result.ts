/** `soniq enqueue --json`: the new (or deduplicated) job's id and the queue and attempts it got. */
import { z } from "zod";

/** `soniq enqueue --json`. */
export const enqueueJsonSchema = z.object({
  id: z.string(),
  /** The queue the job is on (null only if it was deleted before it could be read back). */
  queue: z.string().nullable(),
  /** Runs before the dead-letter queue (null as for `queue`). */
  maxAttempts: z.number().int().nullable(),
});
/** `soniq enqueue --json` (see {@link enqueueJsonSchema}). */
export type EnqueueJson = z.infer<typeof enqueueJsonSchema>;
