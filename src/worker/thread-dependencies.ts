/**
 * The main-thread side of `ctx.dependencies()` for sync handlers (jobs/thread-dependencies.ts):
 * the dependencies of this worker's running claim are read as for an async handler and sent back.
 */
import type { DependencyReader } from "../jobs/context.js";
import {
  answerDependencies,
  dependenciesChannelName,
  type ThreadDependenciesRequest,
} from "../jobs/thread-dependencies.js";
import type { InFlightTable } from "./in-flight.js";
import { errorAnswer, ThreadRequestChannel } from "./thread-request-channel.js";

/** See the module comment. */
export class ThreadDependencies extends ThreadRequestChannel<ThreadDependenciesRequest> {
  constructor(
    workerId: string,
    table: InFlightTable,
    private readonly read: DependencyReader,
  ) {
    super(dependenciesChannelName(workerId), table, "its dependencies were not read");
  }

  protected refuse(request: ThreadDependenciesRequest, error: { code: string; message: string }) {
    answerDependencies(request.reply, { error });
  }

  protected serve(request: ThreadDependenciesRequest): void {
    this.read(request.jobId).then(
      (dependencies) => answerDependencies(request.reply, { dependencies }),
      (err: unknown) => answerDependencies(request.reply, { error: errorAnswer(err) }),
    );
  }
}
