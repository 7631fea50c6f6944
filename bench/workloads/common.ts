/** Helpers the workloads share. */
import type { Adapter, AdapterFactory } from "../adapters/types.js";
import { type BenchPayload, payloads } from "../payload.js";

/** Creates and sets up an adapter, runs `fn`, and always tears the adapter down. */
export async function withAdapter<T>(
  factory: AdapterFactory,
  fn: (adapter: Adapter) => Promise<T>,
): Promise<T> {
  const adapter = factory.create();
  try {
    await adapter.setup();
    return await fn(adapter);
  } finally {
    await withTimeout(adapter.teardown(), 60_000, `${factory.name} teardown`).catch((err) => {
      process.stderr.write(`  warning: ${String(err)}\n`);
    });
  }
}

/**
 * Enqueues `count` numbered payloads in bulk batches of `batch` (not timed by callers), with
 * `enqueue` (default: the adapter's `enqueueBulk`).
 */
export async function fill(
  adapter: Adapter,
  count: number,
  batch: number,
  enqueue: (batch: BenchPayload[]) => Promise<void> = (b) => adapter.enqueueBulk(b),
): Promise<void> {
  for (let start = 0; start < count; start += batch) {
    await enqueue(payloads(Math.min(batch, count - start), start));
  }
}

/** Rejects when `promise` takes longer than `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** A promise with its resolve function. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
