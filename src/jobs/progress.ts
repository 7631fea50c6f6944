/**
 * Job progress (`ctx.progress(fraction, message?)`): the rule for what a handler may report, and
 * the shared buffer a sync handler's thread writes it into. The worker only keeps the latest
 * report per job and writes it with its next heartbeat (never one write per call).
 *
 * The buffer is a `SharedArrayBuffer` with one writer (the thread) and one reader (the worker's
 * heartbeat), kept consistent by a sequence number (a seqlock): the writer makes it odd while it
 * writes and even when done; the reader retries a read during which it changed.
 * Layout: Int32 [0] sequence, Int32 [1] message length in bytes (-1: no message), Float64 at byte
 * 8 the fraction, message UTF-8 bytes from byte 16 (at most {@link MAX_PROGRESS_MESSAGE_BYTES}).
 */
import { SoniqError } from "../errors.js";
import { valueText } from "../value-text.js";

/** Longest progress message kept, in UTF-8 bytes (longer ones are cut). */
export const MAX_PROGRESS_MESSAGE_BYTES = 1000;

/** Size of a progress buffer, in bytes. */
export const PROGRESS_BUFFER_BYTES = 16 + MAX_PROGRESS_MESSAGE_BYTES;

/** One progress report. */
export interface ProgressValue {
  /** 0..1. */
  fraction: number;
  message: string | null;
}

/**
 * Checks a report; cuts the message to {@link MAX_PROGRESS_MESSAGE_BYTES} bytes.
 * @throws SoniqError `INVALID_ARGS` when `fraction` is not a number from 0 to 1 or `message` is
 * not a string.
 */
export function checkProgress(fraction: unknown, message: unknown): ProgressValue {
  if (typeof fraction !== "number" || !(fraction >= 0 && fraction <= 1)) {
    throw new SoniqError(
      "INVALID_ARGS",
      `ctx.progress(fraction): fraction must be a number from 0 to 1, got ${valueText(fraction)}`,
    );
  }
  if (message !== undefined && message !== null && typeof message !== "string") {
    throw new SoniqError(
      "INVALID_ARGS",
      "ctx.progress(fraction, message): message must be a string",
    );
  }
  const text = typeof message === "string" ? cut(message) : null;
  return { fraction, message: text };
}

function cut(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= MAX_PROGRESS_MESSAGE_BYTES) return text;
  // Cut on a character boundary: decoding drops a partial last character as U+FFFD, removed here.
  return bytes
    .subarray(0, MAX_PROGRESS_MESSAGE_BYTES)
    .toString("utf8")
    .replace(/\uFFFD$/, "");
}

/** A new progress buffer for one sync job. */
export function newProgressBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(PROGRESS_BUFFER_BYTES);
}

/** Writes a checked report into `buffer` (the thread side; one writer). */
export function writeProgress(buffer: SharedArrayBuffer, value: ProgressValue): void {
  const ints = new Int32Array(buffer, 0, 2);
  const bytes = new Uint8Array(buffer, 16);
  Atomics.add(ints, 0, 1); // odd: writing
  new Float64Array(buffer, 8, 1)[0] = value.fraction;
  if (value.message === null) {
    Atomics.store(ints, 1, -1);
  } else {
    const encoded = new TextEncoder().encode(value.message);
    bytes.set(encoded.subarray(0, MAX_PROGRESS_MESSAGE_BYTES));
    Atomics.store(ints, 1, Math.min(encoded.length, MAX_PROGRESS_MESSAGE_BYTES));
  }
  Atomics.add(ints, 0, 1); // even: done
}

/**
 * The latest report in `buffer` and its sequence number, or null when none was written (or the
 * writer kept it busy through every retry; the next read gets it).
 */
export function readProgress(buffer: SharedArrayBuffer): (ProgressValue & { seq: number }) | null {
  const ints = new Int32Array(buffer, 0, 2);
  for (let attempt = 0; attempt < 8; attempt++) {
    const before = Atomics.load(ints, 0);
    if (before === 0) return null;
    if (before % 2 === 1) continue;
    const fraction = new Float64Array(buffer, 8, 1)[0] as number;
    const length = Atomics.load(ints, 1);
    const message =
      length < 0 ? null : new TextDecoder().decode(new Uint8Array(buffer, 16, length).slice());
    if (Atomics.load(ints, 0) === before) return { seq: before, fraction, message };
  }
  return null;
}
