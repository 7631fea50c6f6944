/**
 * The soak's sync handler (`soak.sync`, chaos/soak-jobs.ts), run on a worker thread: hashes a
 * 64 KiB buffer `rounds` times (default 20), checking `stopRequested()` between rounds and giving
 * the job back with `snooze(0)` when a stop is requested, as the README teaches.
 */
import { createHash } from "node:crypto";
import { snooze, type ThreadJobContext } from "soniq";
import { appendRun, type SoakArgs } from "./soak-log.js";

const block = Buffer.alloc(64 * 1024, 7);

export default function digest(args: SoakArgs, ctx: ThreadJobContext) {
  appendRun({ id: ctx.jobId, kind: "start", waitMs: Date.now() - ctx.scheduledAt.getTime() });
  const hash = createHash("sha256");
  for (let i = 0; i < (args.rounds ?? 20); i++) {
    if (ctx.stopRequested()) {
      appendRun({ id: ctx.jobId, kind: "snoozed" });
      return snooze(0);
    }
    hash.update(block);
  }
  appendRun({ id: ctx.jobId, kind: "completed" });
  return { sha256: hash.digest("hex") };
}
