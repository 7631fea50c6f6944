/**
 * `soniq.jobs.waitFor(id)` across two processes (issue 31 item 4), on a SQLite file and on
 * PostgreSQL: this process enqueues and waits, a `soniq worker` process runs the job. The wait
 * resolves with the handler's result; rejects with `JOB_FAILED` (the last error) for a job that
 * ended in the dead-letter queue, `JOB_CANCELLED` for one cancelled while it ran, `WAIT_TIMEOUT`
 * past its timeout and `WAIT_ABORTED` (the signal's reason as cause) when aborted (the job
 * untouched), `NOT_FOUND` for an id no job has. On PostgreSQL the end arrives as the finishing
 * statement's notice (test/postgres/wait-for-notices.test.ts shows nothing is read meanwhile);
 * on the SQLite file the wait reads at its bounded interval. `enqueue(…).result()` is the same
 * wait on the handle the enqueue returned.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isSoniqError } from "../../src/index.js";
import { prepared, startWorker, targets } from "../helpers/e2e-targets.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

const workers: Array<ReturnType<typeof startWorker>> = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const w of workers.splice(0)) {
    w.child.kill("SIGTERM");
    await w.exited;
  }
  for (const close of closers.splice(0)) await close();
});

describe.each(targets)("waitFor across processes on $label", (target) => {
  it.skipIf(target.skip)(
    "waitFor › a job run by a worker process › its result; dead-lettered › JOB_FAILED with its error; cancelled › JOB_CANCELLED",
    async () => {
      const { env, db } = await prepared(target);
      closers.push(() => db.close());
      const worker = startWorker(env);
      workers.push(worker);
      await worker.ready;

      const slept = await db.enqueue("e2e.sleep", { ms: 200 });
      expect(await db.jobs.waitFor(slept, { timeout: 60 })).toEqual({ slept: 200 });
      expect(await db.enqueue("e2e.sleep", { ms: 50 }).result({ timeout: 60 })).toEqual({
        slept: 50,
      });

      // Arguments its schema refuses: the worker dead-letters it (invalid_args).
      const strict = await db.enqueue("e2e.strict", { n: "seven" });
      const failed = await db.jobs.waitFor(strict, { timeout: 60 }).catch((e: unknown) => e);
      expect(isSoniqError(failed, "JOB_FAILED"), String(failed)).toBe(true);
      expect((failed as Error).message).toContain("n must be a number");
      expect((failed as { details: { reason: string } }).details.reason).toBe("invalid_args");

      const gate = await db.enqueue("e2e.gate", { path: join(tempDir(), "never") });
      const waiting = db.jobs.waitFor(gate, { timeout: 60 }).catch((e: unknown) => e);
      await waitFor(
        async () => (await db.getJob(gate))?.status === "processing",
        30_000,
        "gate running",
      );
      await db.cancel(gate);
      const cancelled = await waiting;
      expect(isSoniqError(cancelled, "JOB_CANCELLED"), String(cancelled)).toBe(true);
    },
    120_000,
  );

  it.skipIf(target.skip)(
    "waitFor › a job that does not finish › WAIT_TIMEOUT after its timeout, WAIT_ABORTED (the signal's reason as cause) when aborted, the job untouched; an unknown id › NOT_FOUND",
    async () => {
      const { db } = await prepared(target);
      closers.push(() => db.close());
      const gate = await db.enqueue("e2e.gate", { path: join(tempDir(), "never") });
      const started = Date.now();
      const timedOut = await db.jobs.waitFor(gate, { timeout: 0.3 }).catch((e: unknown) => e);
      expect(isSoniqError(timedOut, "WAIT_TIMEOUT"), String(timedOut)).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      const controller = new AbortController();
      const reason = new Error("test over");
      const aborted = db.jobs.waitFor(gate, { signal: controller.signal }).catch((e: unknown) => e);
      controller.abort(reason);
      const abortError = await aborted;
      expect(isSoniqError(abortError, "WAIT_ABORTED"), String(abortError)).toBe(true);
      expect((abortError as Error).cause).toBe(reason);
      expect((await db.getJob(gate))?.status).toBe("queued");
      const missing = await db.jobs.waitFor(randomUUID()).catch((e: unknown) => e);
      expect(isSoniqError(missing, "NOT_FOUND"), String(missing)).toBe(true);
    },
    60_000,
  );
});
