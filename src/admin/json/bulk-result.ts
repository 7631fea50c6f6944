/**
 * A bulk action's result as JSON — the one shape `soniq jobs cancel|retry|delete --all --json`,
 * `soniq dlq replay|delete --all --json` and the dashboard's `POST /api/jobs/bulk` and
 * `POST /api/dead-letter/bulk` share (the admin API's `BulkResult`).
 */
import { z } from "zod";

/** What a bulk action did, as JSON. */
export const bulkResultJsonSchema = z.object({
  /** Rows the ids or the filter matched when the action began. */
  matched: z.number().int(),
  /** Rows the action changed. */
  done: z.number().int(),
  /** Rows left alone (already in a state the action does not apply to, or gone meanwhile). */
  skipped: z.number().int(),
  /** True when nothing was changed on purpose (a dry run, or a declined confirmation). */
  dryRun: z.boolean(),
});
/** A bulk result as JSON (see {@link bulkResultJsonSchema}). */
export type BulkResultJson = z.infer<typeof bulkResultJsonSchema>;
