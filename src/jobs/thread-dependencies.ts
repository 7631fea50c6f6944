/**
 * `ctx.dependencies()` for sync handlers (docs/workflows.md, "Reading dependencies in a
 * handler"): the request a worker thread sends its worker's main thread, and the reply buffer it
 * blocks on.
 *
 * The thread posts `{ jobId, claimToken, reply }` on the worker's broadcast channel
 * ({@link dependenciesChannelName}) and waits (`Atomics.wait`) on `reply`, an `Int32Array` over a
 * `SharedArrayBuffer`: [0] status ({@link DEPENDENCIES_REPLY}), [1] the length in bytes of the
 * UTF-8 JSON text from byte 8 — the dependencies (`DependencyResult[]`), an error
 * (`{ code, message }`), or, for `too_small`, nothing: [1] is then the length the answer needs,
 * and the thread asks again with a buffer that large.
 */
import type { DependencyResult } from "./context.js";
import { postAndWait, readReplyText, replyError, writeErrorText } from "./thread-request.js";

/** Bytes of a first reply buffer's text (a larger answer is asked again with its own size). */
export const FIRST_REPLY_TEXT_BYTES = 64 * 1024;

/** The longest a thread waits for one answer, in milliseconds. */
export const DEPENDENCIES_WAIT_MS = 120_000;

/** Reply statuses. */
export const DEPENDENCIES_REPLY = { pending: 0, ok: 1, refused: 2, too_small: 3 } as const;

/** A thread's request for its job's dependencies. */
export interface ThreadDependenciesRequest {
  jobId: string;
  claimToken: string;
  reply: SharedArrayBuffer;
}

/** The broadcast channel of worker `workerId`'s dependency requests. */
export function dependenciesChannelName(workerId: string): string {
  return `soniq:dependencies:${workerId}`;
}

/**
 * Writes a reply (main thread) and wakes the waiting thread: the dependencies, or an error.
 * Dependencies longer than the buffer are answered `too_small` with the length they need.
 */
export function answerDependencies(
  reply: SharedArrayBuffer,
  answer: { dependencies: DependencyResult[] } | { error: { code: string; message: string } },
): void {
  const ints = new Int32Array(reply, 0, 2);
  if ("error" in answer) {
    Atomics.store(ints, 1, writeErrorText(reply, answer.error));
    Atomics.store(ints, 0, DEPENDENCIES_REPLY.refused);
  } else {
    const bytes = new TextEncoder().encode(JSON.stringify(answer.dependencies));
    Atomics.store(ints, 1, bytes.length);
    if (bytes.length > reply.byteLength - 8) {
      Atomics.store(ints, 0, DEPENDENCIES_REPLY.too_small);
    } else {
      new Uint8Array(reply, 8).set(bytes);
      Atomics.store(ints, 0, DEPENDENCIES_REPLY.ok);
    }
  }
  Atomics.notify(ints, 0);
}

/**
 * The thread side: asks the main thread for the job's dependencies and blocks until answered
 * (a second time, with a buffer of the size it needs, when the answer is larger than
 * {@link FIRST_REPLY_TEXT_BYTES}).
 * @throws SoniqError with the main thread's code (`CLAIM_LOST`, a database error's), or
 *   `UNEXPECTED` when no answer came within {@link DEPENDENCIES_WAIT_MS}.
 */
export function dependenciesFromThread(
  workerId: string,
  request: Omit<ThreadDependenciesRequest, "reply">,
): DependencyResult[] {
  let textBytes = FIRST_REPLY_TEXT_BYTES;
  for (;;) {
    const reply = new SharedArrayBuffer(8 + textBytes);
    const ints = postAndWait(
      dependenciesChannelName(workerId),
      { ...request, reply } satisfies ThreadDependenciesRequest,
      DEPENDENCIES_WAIT_MS,
      "ctx.dependencies",
    );
    const status = Atomics.load(ints, 0);
    const length = Atomics.load(ints, 1);
    if (status === DEPENDENCIES_REPLY.too_small) {
      // An ignored dependency may end between two asks: leave room for its result.
      textBytes = length + FIRST_REPLY_TEXT_BYTES;
      continue;
    }
    const text = readReplyText(reply, length);
    if (status === DEPENDENCIES_REPLY.ok) return JSON.parse(text) as DependencyResult[];
    throw replyError(text, "ctx.dependencies failed");
  }
}
