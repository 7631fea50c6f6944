/**
 * The thread side of a request a worker thread makes to its worker's main thread and blocks on
 * (`ctx.checkpoint`, `ctx.dependencies()` of sync handlers): the request, carrying a reply
 * buffer (a `SharedArrayBuffer` whose first `Int32` is the status, 0 while pending), is posted on
 * a broadcast channel named for the worker, and the thread waits (`Atomics.wait`) until the main
 * thread stores an answer there and notifies.
 */
import { BroadcastChannel } from "node:worker_threads";
import { SoniqError, type SoniqErrorCode } from "../errors.js";

/** This thread's channels, by name (one per worker and kind of request). */
const channels = new Map<string, BroadcastChannel>();

/**
 * Posts `request` (which carries `reply`) on channel `name` and blocks until the status at
 * `reply`'s first `Int32` leaves 0, for at most `waitMs` milliseconds.
 * @returns the reply's header (`[0]` status, `[1]` the answer's length, by convention).
 * @throws SoniqError `UNEXPECTED` when no answer came within `waitMs` (`what` names the call).
 */
export function postAndWait(
  name: string,
  request: { reply: SharedArrayBuffer },
  waitMs: number,
  what: string,
): Int32Array {
  let channel = channels.get(name);
  if (channel === undefined) {
    channel = new BroadcastChannel(name);
    (channel as BroadcastChannel & { unref?: () => void }).unref?.();
    channels.set(name, channel);
  }
  channel.postMessage(request);
  const ints = new Int32Array(request.reply, 0, 2);
  if (Atomics.wait(ints, 0, 0, waitMs) === "timed-out") {
    throw new SoniqError("UNEXPECTED", `${what}: no answer from the worker within ${waitMs} ms`);
  }
  return ints;
}

/** Writes an error answer's JSON text (`{ code, message }`) from byte 8 of `reply`, cut to fit. */
export function writeErrorText(
  reply: SharedArrayBuffer,
  error: { code: string; message: string },
): number {
  const bytes = new TextEncoder()
    .encode(JSON.stringify(error))
    .subarray(0, Math.max(0, reply.byteLength - 8));
  new Uint8Array(reply, 8).set(bytes);
  return bytes.length;
}

/** The UTF-8 text of `length` bytes from byte 8 of `reply`. */
export function readReplyText(reply: SharedArrayBuffer, length: number): string {
  return new TextDecoder().decode(new Uint8Array(reply, 8, length).slice());
}

/** The error an answer's text (`{ code, message }`) describes, as a SoniqError. */
export function replyError(text: string, fallback: string): SoniqError {
  let parsed: { code?: string; message?: string } = {};
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    parsed = { message: text };
  }
  return new SoniqError(
    (parsed.code ?? "UNEXPECTED") as SoniqErrorCode,
    (parsed.message ?? fallback).replace(/^[A-Z_]+: /, ""),
  );
}
