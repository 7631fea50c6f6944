/** `soniq worker --json`: the one line printed at exit — which worker, why, its exit code. */
import { z } from "zod";

/** `soniq worker --json`. */
export const workerExitJsonSchema = z.object({
  workerId: z.string(),
  /** `drained`, `shutdown_timeout`, `record_failed`, `start_failed`, … */
  reason: z.string(),
  /** The process's exit code: 0 drained, 1 deadline path, 2 start-up, 3 outcome not recorded. */
  exitCode: z.number().int(),
  /** Ids of the jobs released (NACK'd back to queued) at the deadline. */
  released: z.array(z.string()),
});
/** `soniq worker --json` (see {@link workerExitJsonSchema}). */
export type WorkerExitJson = z.infer<typeof workerExitJsonSchema>;
