import { describe, expect, it } from "vitest";
import { currentJobScope, runInJobScope, wantJobScopes } from "../../src/worker/job-scope.js";

const job = { id: "j1", name: "scoped.job" };

describe("job scopes (entered only while someone reads them)", () => {
  it("without a reader, the handler runs with no scope; with one, its later promises still see the job", async () => {
    expect(runInJobScope("w1", job, () => currentJobScope())).toBeUndefined();
    const withdraw = wantJobScopes();
    try {
      const seen = await runInJobScope("w1", job, async () => {
        await new Promise((r) => setTimeout(r, 5));
        return currentJobScope();
      });
      expect(seen).toEqual({ workerId: "w1", jobId: "j1", jobName: "scoped.job" });
    } finally {
      withdraw();
      withdraw(); // idempotent: one wish withdrawn once
    }
    expect(runInJobScope("w1", job, () => currentJobScope())).toBeUndefined();
  });

  it("returns what the function returns, and its synchronous throw, either way", () => {
    expect(runInJobScope("w1", job, () => 42)).toBe(42);
    expect(() =>
      runInJobScope("w1", job, () => {
        throw new Error("boom");
      }),
    ).toThrow("boom");
  });
});
