/**
 * The dashboard's live bulk operations (src/dashboard/operations.ts): the start answers once the
 * rows are counted, an error before that rejects the start (nothing kept), an error after it is
 * kept on the operation and logged, totals are read while it runs, and only the newest finished
 * operations are kept.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { BulkResult } from "../../src/admin/bulk.js";
import { BulkOperations, KEPT_OPERATIONS } from "../../src/dashboard/operations.js";
import { SoniqError } from "../../src/errors.js";
import { waitFor } from "../helpers/wait.js";

const totals = (matched: number, done: number): BulkResult => ({
  matched,
  done,
  skipped: 0,
  dryRun: false,
});

describe("dashboard bulk operations", () => {
  it("operations › counted, then paused between batches › the start answers with matched, running totals readable, then finished", async () => {
    const ops = new BulkOperations(pino({ level: "silent" }));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const started = await ops.start("jobs.bulk.cancel", "ada", async (onProgress) => {
      await onProgress(totals(10, 0));
      await onProgress(totals(10, 4));
      await gate;
      return totals(10, 10);
    });
    expect(started).toMatchObject({ matched: 10, done: 0, finished: false, user: "ada" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(ops.get(started.id)).toMatchObject({ done: 4, finished: false });
    release();
    await waitFor(() => ops.get(started.id)?.finished, 5000, "the operation to finish");
    expect(ops.get(started.id)).toMatchObject({
      matched: 10,
      done: 10,
      finished: true,
      error: null,
    });
  });

  it("operations › an error before the count › the start rejects with it, nothing kept", async () => {
    const ops = new BulkOperations(pino({ level: "silent" }));
    await expect(
      ops.start("jobs.bulk.retry", "ada", async () => {
        throw new SoniqError("COUNT_MISMATCH", "expected 3 but 4 match");
      }),
    ).rejects.toMatchObject({ code: "COUNT_MISMATCH" });
  });

  it("operations › an error after the count › kept on the operation with its code, and logged", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "error" }, { write: (line: string) => lines.push(line) });
    const ops = new BulkOperations(logger);
    const started = await ops.start("deadLetters.bulk.replay", "ada", async (onProgress) => {
      await onProgress(totals(5, 0));
      await onProgress(totals(5, 2));
      throw new SoniqError("CLOSED", "the pool is closed");
    });
    await waitFor(() => ops.get(started.id)?.finished, 5000, "the operation to stop");
    expect(ops.get(started.id)).toMatchObject({
      done: 2,
      finished: true,
      error: { code: "CLOSED", message: expect.stringContaining("the pool is closed") },
    });
    expect(lines.join("")).toContain("dashboard bulk operation stopped on an error");
  });

  it(`operations › more than ${KEPT_OPERATIONS} finished › the oldest are forgotten`, async () => {
    const ops = new BulkOperations(pino({ level: "silent" }));
    const ids: string[] = [];
    for (let i = 0; i < KEPT_OPERATIONS + 5; i += 1) {
      const op = await ops.start("jobs.bulk.delete", "ada", async () => totals(0, 0));
      ids.push(op.id);
    }
    expect(ops.get(ids[0] as string)).toBeUndefined();
    expect(ops.get(ids[4] as string)).toBeUndefined();
    expect(ops.get(ids[5] as string)?.finished).toBe(true);
    expect(ops.get(ids[ids.length - 1] as string)?.finished).toBe(true);
  });
});
