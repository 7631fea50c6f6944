/**
 * Operations contract: bulk actions through the admin API (`soniq.jobs.bulk`) on ids or on a
 * filter, in batches, guarded by an expected count (a mismatch changes nothing), returning
 * matched/done/skipped.
 */
import { describe, expect, it } from "vitest";
import type { ContractContext } from "../helpers.js";
import { claimOne, put, soniqOn } from "./admin-helpers.js";

export function adminBulkCases({ make }: ContractContext): void {
  describe("operations: bulk actions", () => {
    it("bulk cancel › filter with a wrong expectedCount › COUNT_MISMATCH, nothing changed", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      for (let i = 0; i < 5; i++) await put(b, { queue: "bulk" });
      await expect(
        soniq.jobs.bulk({ action: "cancel", filter: { queue: "bulk" }, expectedCount: 4 }),
      ).rejects.toMatchObject({ code: "COUNT_MISMATCH" });
      expect(await soniq.jobs.count({ queue: "bulk", status: "queued" })).toBe(5);
      expect(
        await soniq.jobs.bulk({ action: "cancel", filter: { queue: "bulk" }, dryRun: true }),
      ).toEqual({ matched: 5, done: 0, skipped: 0, dryRun: true });
    });

    it("bulk cancel › filter in small batches › every match done, a running one requested; a second run skips them all", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      for (let i = 0; i < 7; i++) await put(b, { queue: "bulk" });
      const running = await claimOne(b, "w1", "bulk");
      const result = await soniq.jobs.bulk({
        action: "cancel",
        filter: { queue: "bulk" },
        expectedCount: 7,
        batchSize: 2,
      });
      expect(result).toEqual({ matched: 7, done: 7, skipped: 0, dryRun: false });
      expect(await soniq.jobs.count({ queue: "bulk", status: "cancelled" })).toBe(6);
      expect((await soniq.jobs.get(running.id))?.status).toBe("processing");
      // A second run over the same filter skips what is already finished.
      const again = await soniq.jobs.bulk({ action: "cancel", filter: { queue: "bulk" } });
      expect(again).toEqual({ matched: 7, done: 0, skipped: 7, dryRun: false });
    });

    it("bulk retry and delete › ids › done and skipped counted; running rows skipped", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      const a = await put(b, { queue: "q" });
      const c = await put(b, { queue: "q" });
      await soniq.jobs.cancel(a);
      const running = await claimOne(b, "w1", "q");
      expect(running.id).toBe(c);
      expect(await soniq.jobs.bulk({ action: "retry", ids: [a, c] })).toEqual({
        matched: 2,
        done: 1,
        skipped: 1,
        dryRun: false,
      });
      expect((await soniq.jobs.get(a))?.status).toBe("queued");
      expect(await soniq.jobs.bulk({ action: "delete", ids: [a, c] })).toMatchObject({
        done: 1,
        skipped: 1,
      });
      expect(await soniq.jobs.get(a)).toBeNull();
      await expect(
        soniq.jobs.bulk({ action: "delete", ids: [a], filter: {} }),
      ).rejects.toMatchObject({
        code: "INVALID_OPTION",
      });
    });
  });
}
