/**
 * What the CLI does when the reader of its output goes away (`soniq dlq export | head -c 100`):
 * writing to a closed pipe fails with EPIPE, which Node raises as an unhandled `error` event (a
 * stack trace, exit 1). A command whose output nobody reads any more stops quietly with exit 0;
 * `soniq worker` (whose work is not its output) ignores it and drains as usual.
 */

/** True for the error a write to a pipe whose reader closed raises. */
export function isClosedPipe(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === "EPIPE";
}

/**
 * Handles EPIPE on standard output and standard error.
 * @param onClosed - `"exit"`: end the process with exit code 0 (every command but the worker;
 *   whatever it wrote to the store before printing is already durable, and it only printed after);
 *   `"ignore"`: drop further output and go on (the worker).
 * Any other stream error is thrown again, as Node would.
 */
export function handleClosedPipes(onClosed: "exit" | "ignore"): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: unknown) => {
      if (!isClosedPipe(err)) throw err;
      if (onClosed === "exit") process.exit(0);
    });
  }
}
