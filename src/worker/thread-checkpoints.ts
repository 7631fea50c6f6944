/**
 * The main-thread side of `ctx.checkpoint` for sync handlers (jobs/thread-checkpoint.ts): each
 * request of this worker's running claim is written through the job's {@link JobResume} (the
 * same fenced, coalesced write as an async handler's) and answered once durable or refused.
 */
import {
  answer,
  checkpointChannelName,
  type ThreadCheckpointRequest,
} from "../jobs/thread-checkpoint.js";
import type { InFlight, InFlightTable } from "./in-flight.js";
import { JobResume, type ResumeDeps } from "./job-resume.js";
import { errorAnswer, ThreadRequestChannel } from "./thread-request-channel.js";

/** See the module comment. */
export class ThreadCheckpoints extends ThreadRequestChannel<ThreadCheckpointRequest> {
  constructor(
    workerId: string,
    table: InFlightTable,
    private readonly deps: ResumeDeps,
  ) {
    super(checkpointChannelName(workerId), table, "the checkpoint was not written");
  }

  protected refuse(request: ThreadCheckpointRequest, error: { code: string; message: string }) {
    answer(request.reply, error);
  }

  protected serve(request: ThreadCheckpointRequest, entry: InFlight): void {
    entry.resume ??= new JobResume(
      entry.job.id,
      entry.owner,
      entry.resumeState,
      entry.controller,
      this.deps,
    );
    entry.resume.checkpoint(request.state).then(
      () => answer(request.reply),
      (err: unknown) => answer(request.reply, errorAnswer(err)),
    );
  }
}
