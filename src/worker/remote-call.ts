/**
 * Runs one call of a remote job's handler (`submit`, `poll`, `reconcile`, `preflight`) under its
 * two bounds, both stated by the {@link ShutdownMachine} (job-deadline.ts): the call's own timeout
 * (`submitTimeout`) and FORCE_TIMEOUT_PATH, after which the call has the settle window to return.
 * It reports how the call ended; deciding what that means (freeze, hand off, release) is the
 * caller's.
 */
import { ShutdownTimeoutError } from "../jobs/context.js";
import { watchJobDeadlines } from "./job-deadline.js";
import type { LazyAbortController } from "./lazy-abort-controller.js";
import type { ShutdownMachine } from "./shutdown-machine.js";

/** The reason `ctx.signal` carries when a remote call took longer than `submitTimeout`. */
export class RemoteCallTimeoutError extends Error {
  constructor(seconds: number) {
    super(`the remote call took longer than ${seconds} s`);
    this.name = "RemoteCallTimeoutError";
  }
}

/** How a bounded call ended. */
export type CallEnd<T> =
  /** It returned (before FORCE_TIMEOUT_PATH, or within the settle window after it). */
  | { kind: "value"; value: T }
  /** It threw before FORCE_TIMEOUT_PATH. */
  | { kind: "threw"; error: unknown }
  /** Its own timeout fired first. */
  | { kind: "timeout" }
  /** FORCE_TIMEOUT_PATH came and it did not return within the settle window. */
  | { kind: "deadline" };

/**
 * @param timeoutSeconds - the call's own bound, in seconds (0: none).
 * @param settleSeconds - `shutdownSettle`, in seconds, from the FORCE_TIMEOUT_PATH instant.
 * @returns How the call ended; never rejects.
 */
export function boundedCall<T>(
  call: () => Promise<T> | T,
  controller: LazyAbortController,
  timeoutSeconds: number,
  settleSeconds: number,
  machine: ShutdownMachine,
): Promise<CallEnd<T>> {
  return new Promise<CallEnd<T>>((resolve) => {
    let settled = false;
    let forced = false;
    let settleTimer: NodeJS.Timeout | undefined;
    let unwatch: () => void = () => undefined;
    const finish = (end: CallEnd<T>) => {
      if (settled) return;
      settled = true;
      unwatch();
      clearTimeout(settleTimer);
      resolve(end);
    };
    unwatch = watchJobDeadlines(machine, timeoutSeconds, {
      onJobTimeout: () => {
        controller.abort(new RemoteCallTimeoutError(timeoutSeconds));
        finish({ kind: "timeout" });
      },
      onForce: () => {
        if (settled || forced) return;
        forced = true;
        controller.abort(new ShutdownTimeoutError());
        const settleEndsAt = (machine.forcedAt ?? machine.now()) + settleSeconds * 1000;
        settleTimer = setTimeout(
          () => finish({ kind: "deadline" }),
          Math.max(0, settleEndsAt - machine.now()),
        );
      },
    });
    Promise.resolve()
      .then(call)
      .then(
        (value) => finish({ kind: "value", value }),
        (error: unknown) => finish(forced ? { kind: "deadline" } : { kind: "threw", error }),
      );
  });
}
