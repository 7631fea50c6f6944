/**
 * Job ids: time-ordered UUIDs (version 7, RFC 9562 §5.7), made in this one place for every backend.
 * An id begins with the Unix time in milliseconds, so ids made later sort later, and within one
 * process they strictly increase (RFC 9562 §6.2 method 1: a 12-bit counter in `rand_a`, started at
 * a random value below 2,048 each millisecond). New rows then land at the right edge of the
 * primary-key index and next to each other in the heap, in claim order, instead of at random places
 * (docs/backends.md, "Tables"). The column stays `uuid`: ids made before (version 4) stay valid and
 * are still accepted everywhere. An id reveals when its job was enqueued (to the millisecond).
 */
import { randomFillSync } from "node:crypto";

/** Random bytes taken 10 per id from one refilled buffer (one system call per 409 ids). */
const pool = Buffer.alloc(4090);
let poolAt = pool.length;

/** The last id's millisecond and counter (monotonic state of this process). */
let lastMs = -1;
let counter = 0;

/** Hex digits of every byte value. */
const HEX: readonly string[] = Array.from({ length: 256 }, (_, b) =>
  b.toString(16).padStart(2, "0"),
);

/** Two hex digits of byte `b` (0–255). */
function hex(b: number): string {
  return HEX[b & 0xff] as string;
}

/** Two hex digits of the random byte at `at` in {@link pool}. */
function rnd(at: number): string {
  return HEX[pool[at] as number] as string;
}

/** The offset in {@link pool} of the next 10 random bytes. */
function randomOffset(): number {
  if (poolAt + 10 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += 10;
  return at;
}

/**
 * A new job id: a lower-case UUID version 7 (`xxxxxxxx-xxxx-7xxx-[89ab]xxx-xxxxxxxxxxxx`), each one
 * greater (as a string and as a `uuid`) than the previous one made by this process. When the
 * clock steps back, or more than 2,048–4,096 ids are made in one millisecond, the id's time runs
 * slightly ahead of the clock rather than break the order.
 * @param nowMs The current time in **milliseconds** since the Unix epoch (tests pass a fixed clock).
 */
export function newJobId(nowMs: number = Date.now()): string {
  const r = randomOffset();
  if (nowMs > lastMs) {
    lastMs = nowMs;
    counter = ((pool[r + 8] as number) << 3) | ((pool[r + 9] as number) & 0x07); // < 2,048
  } else {
    counter += 1;
    if (counter > 0xfff) {
      lastMs += 1; // the counter is spent: borrow the next millisecond
      counter = 0;
    }
  }
  const ms = lastMs;
  const high = Math.floor(ms / 0x1000000); // top 24 of the 48 time bits
  const low = ms % 0x1000000;
  return (
    hex(high >>> 16) +
    hex(high >>> 8) +
    hex(high) +
    hex(low >>> 16) +
    "-" +
    hex(low >>> 8) +
    hex(low) +
    "-" +
    hex(0x70 | (counter >>> 8)) +
    hex(counter) +
    "-" +
    hex(0x80 | ((pool[r] as number) & 0x3f)) +
    rnd(r + 1) +
    "-" +
    rnd(r + 2) +
    rnd(r + 3) +
    rnd(r + 4) +
    rnd(r + 5) +
    rnd(r + 6) +
    rnd(r + 7)
  );
}
