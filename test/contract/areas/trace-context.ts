/**
 * Contract area: the trace context stored with a job at enqueue comes back with its claim (and a
 * job enqueued without one claims with null). Run on every backend by ../runner.ts.
 */
import { describe, expect, it } from "vitest";
import { type ContractContext, claimDue, newJob } from "../helpers.js";

/** The trace-context cases. */
export function traceContextCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("trace context", () => {
    it("jobEnqueue then jobClaim › a job with a trace context and one without › each claim carries its own (or null)", async () => {
      const b = await make();
      const traced = newJob({
        priority: 0,
        traceContext: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 vendor=x",
      });
      const plain = newJob({ priority: 1 });
      await b.jobEnqueue({ jobs: [traced, plain] });
      const claimed = await claimDue(b, 2);
      expect(claimed.map((c) => [c.id, c.traceContext ?? null])).toEqual([
        [traced.id, traced.traceContext],
        [plain.id, null],
      ]);
    });
  });
}
