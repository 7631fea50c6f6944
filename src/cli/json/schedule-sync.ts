/** `soniq schedules sync --json` and `soniq schedules preview --json`. */
import { z } from "zod";
import { instantJsonSchema } from "../../admin/json/instant.js";

/** `soniq schedules sync --json`: schedule ids by what the reconciliation did. */
export const scheduleSyncJsonSchema = z.object({
  created: z.array(z.string()),
  updated: z.array(z.string()),
  unchanged: z.array(z.string()),
  /** Rows no definition declares (kept unless `--prune`). */
  undeclared: z.array(z.string()),
  /** Undeclared rows deleted (`--prune`). */
  pruned: z.array(z.string()),
});
/** `soniq schedules sync --json` (see {@link scheduleSyncJsonSchema}). */
export type ScheduleSyncJson = z.infer<typeof scheduleSyncJsonSchema>;

/** `soniq schedules preview --json`: the next instants, oldest first. */
export const schedulePreviewJsonSchema = z.array(instantJsonSchema);
