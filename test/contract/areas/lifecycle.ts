/**
 * Contract area: setup and close. Run on every backend by ../runner.ts.
 */
import { describe, expect, it } from "vitest";
import { isSoniqError } from "../../../src/errors.js";
import type { ContractContext } from "../helpers.js";

/** The setup and close cases. */
export function lifecycleCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("lifecycle", () => {
    it("setup › already set up › changes nothing", async () => {
      const b = await make();
      await b.setup();
      await b.setup();
      expect((await b.jobStats()).total).toBe(0);
    });

    it("close › then any call › rejects with CLOSED", async () => {
      const b = await ctx.target.make();
      await b.close();
      const err = await b.jobStats().catch((e: unknown) => e);
      expect(isSoniqError(err, "CLOSED")).toBe(true);
    });
  });
}
