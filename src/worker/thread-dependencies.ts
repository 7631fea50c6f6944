/**
 * The main-thread side of `ctx.dependencies()` for sync handlers (jobs/thread-dependencies.ts):
 * one broadcast channel per worker, opened with its thread pool. A request whose job or claim
 * token is not this worker's running claim is refused `CLAIM_LOST` without a read; otherwise the
 * job's dependencies are read as for an async handler and sent back.
 */
import { BroadcastChannel } from "node:worker_threads";
import { SoniqError } from "../errors.js";
import type { DependencyReader } from "../jobs/context.js";
import {
  answerDependencies,
  dependenciesChannelName,
  type ThreadDependenciesRequest,
} from "../jobs/thread-dependencies.js";
import type { InFlightTable } from "./in-flight.js";

/** See the module comment. */
export class ThreadDependencies {
  private channel: BroadcastChannel | undefined;

  constructor(
    private readonly workerId: string,
    private readonly table: InFlightTable,
    private readonly read: DependencyReader,
  ) {}

  /** Starts answering (idempotent). */
  open(): void {
    if (this.channel) return;
    const channel = new BroadcastChannel(dependenciesChannelName(this.workerId));
    (channel as BroadcastChannel & { unref?: () => void }).unref?.();
    channel.onmessage = (event) => this.serve((event as { data: ThreadDependenciesRequest }).data);
    this.channel = channel;
  }

  /** Stops answering (after every thread returned). */
  close(): void {
    this.channel?.close();
    this.channel = undefined;
  }

  private serve(request: ThreadDependenciesRequest): void {
    const entry = this.table.get(request.jobId);
    if (!entry || entry.owner.claimToken !== request.claimToken) {
      answerDependencies(request.reply, {
        error: {
          code: "CLAIM_LOST",
          message: `job ${request.jobId}: this worker no longer holds the claim; its dependencies were not read`,
        },
      });
      return;
    }
    this.read(request.jobId).then(
      (dependencies) => answerDependencies(request.reply, { dependencies }),
      (err: unknown) =>
        answerDependencies(request.reply, {
          error: {
            code: err instanceof SoniqError ? err.code : "UNEXPECTED",
            message: err instanceof Error ? err.message : String(err),
          },
        }),
    );
  }
}
