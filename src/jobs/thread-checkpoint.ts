/**
 * `ctx.checkpoint` for sync handlers (docs/checkpoints.md, "Thread (sync) handlers"): the
 * message a worker thread sends its worker's main thread, and the reply buffer it blocks on
 * (thread-request.ts).
 *
 * The thread posts `{ jobId, claimToken, state, reply }` on the worker's broadcast channel
 * ({@link checkpointChannelName}) and waits on `reply`, an `Int32Array` over a
 * `SharedArrayBuffer`: [0] status (0 pending, 1 durable, 2 refused), [1] length of the error's
 * UTF-8 JSON text (`{ code, message }`) from byte 8. The main thread writes the checkpoint with
 * the job's claim (fenced) and answers.
 */
import { postAndWait, readReplyText, replyError, writeErrorText } from "./thread-request.js";

/** Bytes of a reply buffer: the header and at most this much error text. */
export const REPLY_BYTES = 8 + 2048;

/** The longest a thread waits for its checkpoint to be written, in milliseconds. */
export const CHECKPOINT_WAIT_MS = 120_000;

/** Reply statuses. */
export const REPLY = { pending: 0, durable: 1, refused: 2 } as const;

/** A thread's checkpoint request. */
export interface ThreadCheckpointRequest {
  jobId: string;
  claimToken: string;
  state: unknown;
  reply: SharedArrayBuffer;
}

/** The broadcast channel of worker `workerId`'s checkpoint requests. */
export function checkpointChannelName(workerId: string): string {
  return `soniq:checkpoints:${workerId}`;
}

/** Writes a reply (main thread) and wakes the waiting thread. */
export function answer(reply: SharedArrayBuffer, error?: { code: string; message: string }): void {
  const ints = new Int32Array(reply, 0, 2);
  if (error) {
    Atomics.store(ints, 1, writeErrorText(reply, error));
    Atomics.store(ints, 0, REPLY.refused);
  } else Atomics.store(ints, 0, REPLY.durable);
  Atomics.notify(ints, 0);
}

/**
 * The thread side: posts the request and blocks until the main thread answered.
 * @throws SoniqError with the main thread's code (`INVALID_PAYLOAD`, `CLAIM_LOST`, …), or
 *   `UNEXPECTED` when no answer came within {@link CHECKPOINT_WAIT_MS}.
 */
export function checkpointFromThread(
  workerId: string,
  request: Omit<ThreadCheckpointRequest, "reply">,
): void {
  const reply = new SharedArrayBuffer(REPLY_BYTES);
  const ints = postAndWait(
    checkpointChannelName(workerId),
    { ...request, reply } satisfies ThreadCheckpointRequest,
    CHECKPOINT_WAIT_MS,
    "ctx.checkpoint",
  );
  if (Atomics.load(ints, 0) === REPLY.durable) return;
  throw replyError(readReplyText(reply, Atomics.load(ints, 1)), "ctx.checkpoint failed");
}
