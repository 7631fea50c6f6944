/**
 * Checking a connection out of the pool without letting the server's goodbye crash the process.
 *
 * pg-pool removes its own `error` listener from a connection while it is checked out. If the
 * server ends that connection between two of our statements (`pg_terminate_backend`, a restart,
 * an idle-in-transaction timeout), the driver emits `error` on it with nobody listening, which
 * Node turns into an uncaught exception — exit code 4 for a worker that was otherwise fine. The
 * guard listens for the whole checkout, keeps the error (the next statement on that connection
 * fails anyway, with the driver's own error) and makes {@link CheckedOut.release} discard the
 * connection instead of returning it to the pool.
 */
import type pg from "pg";

/** A checked-out connection and how to give it back. */
export interface CheckedOut {
  client: pg.PoolClient;
  /**
   * Returns the connection to the pool, or destroys it when `broken` is true or the server ended
   * it while checked out. Idempotent.
   */
  release(broken?: boolean): void;
}

/**
 * Checks a connection out of `pool` with an `error` listener held until release.
 * @throws the driver's connection error when no connection can be opened.
 */
export async function checkOut(pool: pg.Pool): Promise<CheckedOut> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (error: Error) => {
    lost ??= error;
  };
  client.on("error", onError);
  let released = false;
  return {
    client,
    release(broken = false) {
      if (released) return;
      released = true;
      client.removeListener("error", onError);
      client.release(lost ?? (broken ? true : undefined));
    },
  };
}
