/**
 * Contract area: the lease store. Run on every backend by ../runner.ts.
 */
import { describe, expect, it } from "vitest";
import type { ContractContext } from "../helpers.js";

/** The lease store cases. */
export function leasesCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("leases", () => {
    it("leaseTryTake › another holder's lease › refused until it expires or is resigned", async () => {
      const b = await make();
      expect(await b.leaseTryTake({ name: "maintenance", holder: "a", ttlSeconds: 1 })).toBe(true);
      expect(await b.leaseTryTake({ name: "maintenance", holder: "b", ttlSeconds: 1 })).toBe(false);
      expect(await b.leaseTryTake({ name: "maintenance", holder: "a", ttlSeconds: 1 })).toBe(true); // renewal
      expect(await b.leaseTryTake({ name: "other", holder: "b", ttlSeconds: 10 })).toBe(true); // leases are independent
      // Past a's 1 s lease (expiry only gets later under load); the calls above, which must land
      // inside it, have the whole second.
      await new Promise((r) => setTimeout(r, 1100));
      expect(await b.leaseTryTake({ name: "maintenance", holder: "b", ttlSeconds: 10 })).toBe(true); // a's lease expired: fail-over
      expect(await b.leaseTryTake({ name: "maintenance", holder: "a", ttlSeconds: 10 })).toBe(
        false,
      );
      await b.leaseResign({ name: "maintenance", holder: "a" }); // not a's: no effect
      expect(await b.leaseTryTake({ name: "maintenance", holder: "a", ttlSeconds: 10 })).toBe(
        false,
      );
      await b.leaseResign({ name: "maintenance", holder: "b" });
      expect(await b.leaseTryTake({ name: "maintenance", holder: "a", ttlSeconds: 10 })).toBe(true);
    });
  });
}
