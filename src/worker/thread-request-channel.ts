/**
 * The main-thread side of the requests a worker's sync-handler threads block on
 * (jobs/thread-request.ts): one broadcast channel per worker and kind of request, open while the
 * thread pool is. A request whose job is not in this worker's in-flight table, or carries
 * another claim token, is refused (`CLAIM_LOST`) without touching the database; the others are
 * served with the job's in-flight entry.
 */
import { BroadcastChannel } from "node:worker_threads";
import { SoniqError } from "../errors.js";
import type { InFlight, InFlightTable } from "./in-flight.js";

/** What every such request carries. */
export interface ThreadJobRequest {
  jobId: string;
  claimToken: string;
}

/** See the module comment. */
export abstract class ThreadRequestChannel<R extends ThreadJobRequest> {
  private channel: BroadcastChannel | undefined;

  /**
   * @param name - the channel's name (one per worker and kind of request).
   * @param refusal - what a refused request did not do, for its message ("nothing written").
   */
  constructor(
    private readonly name: string,
    private readonly table: InFlightTable,
    private readonly refusal: string,
  ) {}

  /** Starts answering (idempotent). */
  open(): void {
    if (this.channel) return;
    const channel = new BroadcastChannel(this.name);
    (channel as BroadcastChannel & { unref?: () => void }).unref?.();
    channel.onmessage = (event) => this.receive((event as { data: R }).data);
    this.channel = channel;
  }

  /** Stops answering (after every thread returned). */
  close(): void {
    this.channel?.close();
    this.channel = undefined;
  }

  /** Answers a request of this worker's running claim. */
  protected abstract serve(request: R, entry: InFlight): void;

  /** Answers a request whose claim this worker does not hold with `error` (`CLAIM_LOST`). */
  protected abstract refuse(request: R, error: { code: string; message: string }): void;

  private receive(request: R): void {
    const entry = this.table.get(request.jobId);
    if (!entry || entry.owner.claimToken !== request.claimToken) {
      this.refuse(request, {
        code: "CLAIM_LOST",
        message: `job ${request.jobId}: this worker no longer holds the claim (${this.refusal})`,
      });
      return;
    }
    this.serve(request, entry);
  }
}

/** An error as a thread's answer: its code (`UNEXPECTED` when not a SoniqError) and message. */
export function errorAnswer(err: unknown): { code: string; message: string } {
  return {
    code: err instanceof SoniqError ? err.code : "UNEXPECTED",
    message: err instanceof Error ? err.message : String(err),
  };
}
