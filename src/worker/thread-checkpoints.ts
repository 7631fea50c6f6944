/**
 * The main-thread side of `ctx.checkpoint` for sync handlers (jobs/thread-checkpoint.ts): one
 * broadcast channel per worker, opened with its thread pool. Each request is written through the
 * job's {@link JobResume} (the same fenced, coalesced write as an async handler's) and answered
 * once durable or refused; a request whose job or claim token is not this worker's running claim
 * is refused `CLAIM_LOST` without a write.
 */
import { BroadcastChannel } from "node:worker_threads";
import { SoniqError } from "../errors.js";
import {
  answer,
  checkpointChannelName,
  type ThreadCheckpointRequest,
} from "../jobs/thread-checkpoint.js";
import type { InFlightTable } from "./in-flight.js";
import { JobResume, type ResumeDeps } from "./job-resume.js";

/** See the module comment. */
export class ThreadCheckpoints {
  private channel: BroadcastChannel | undefined;

  constructor(
    private readonly workerId: string,
    private readonly table: InFlightTable,
    private readonly deps: ResumeDeps,
  ) {}

  /** Starts answering (idempotent). */
  open(): void {
    if (this.channel) return;
    const channel = new BroadcastChannel(checkpointChannelName(this.workerId));
    (channel as BroadcastChannel & { unref?: () => void }).unref?.();
    channel.onmessage = (event) => this.serve((event as { data: ThreadCheckpointRequest }).data);
    this.channel = channel;
  }

  /** Stops answering (after every thread returned). */
  close(): void {
    this.channel?.close();
    this.channel = undefined;
  }

  private serve(request: ThreadCheckpointRequest): void {
    const entry = this.table.get(request.jobId);
    if (!entry || entry.owner.claimToken !== request.claimToken) {
      answer(request.reply, {
        code: "CLAIM_LOST",
        message: `job ${request.jobId}: this worker no longer holds the claim; the checkpoint was not written`,
      });
      return;
    }
    entry.resume ??= new JobResume(
      entry.job.id,
      entry.owner,
      entry.resumeState,
      entry.controller,
      this.deps,
    );
    entry.resume.checkpoint(request.state).then(
      () => answer(request.reply),
      (err: unknown) =>
        answer(request.reply, {
          code: err instanceof SoniqError ? err.code : "UNEXPECTED",
          message: err instanceof Error ? err.message : String(err),
        }),
    );
  }
}
