/** Thrown by {@link withTimeout} when the promise did not settle in time. */
export class OperationTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = "OperationTimeoutError";
  }
}

/**
 * Resolves or rejects like `promise`, or rejects with {@link OperationTimeoutError} after `ms`
 * milliseconds — or with `signal`'s reason once it aborts. The promise itself goes on: pass
 * `onLate` to deal with its value if it arrives after that (e.g. release rows a timed-out claim
 * took after all).
 */
export function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
  onLate?: (value: T) => void,
  signal?: AbortSignal,
): Promise<T> {
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new OperationTimeoutError(what, ms));
    }, ms);
    if (signal) {
      onAbort = () => {
        timedOut = true;
        reject(signal.reason);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  promise.then(
    (value) => {
      if (timedOut) onLate?.(value);
    },
    () => undefined,
  );
  return Promise.race([promise, timeout]).finally(() => {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  });
}

/**
 * Longest a claim, a heartbeat or one try of an outcome write may take, in milliseconds: a
 * database that stops answering (network black hole) must not hang a drain.
 */
export const DB_CALL_TIMEOUT_MS = 10_000;
