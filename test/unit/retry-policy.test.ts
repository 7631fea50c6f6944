import { describe, expect, it } from "vitest";
import { assertRetryPolicy, retryDelaySeconds } from "../../src/jobs/retry-policy.js";

describe("retry policy (seconds)", () => {
  it("fixed", () => {
    expect(retryDelaySeconds({ kind: "fixed", delay: 7 }, 3, new Error("x")).seconds).toBe(7);
  });
  it("exponential with cap and bounded jitter", () => {
    const p = { kind: "exponential" as const, base: 2, factor: 3, max: 100, jitter: 0.25 };
    expect(retryDelaySeconds(p, 1, null, () => 0.5).seconds).toBe(2);
    expect(retryDelaySeconds(p, 3, null, () => 0.5).seconds).toBe(18);
    expect(retryDelaySeconds(p, 10, null, () => 0.5).seconds).toBe(100);
    expect(retryDelaySeconds(p, 3, null, () => 0).seconds).toBeCloseTo(13.5);
    expect(retryDelaySeconds(p, 3, null, () => 0.999999).seconds).toBeLessThanOrEqual(22.5);
  });
  it("custom policies get the real error; bad answers fall back to 0 with a problem", () => {
    const err = new RangeError("r");
    let got: unknown;
    expect(
      retryDelaySeconds(
        (_a, e) => {
          got = e;
          return 4;
        },
        1,
        err,
      ).seconds,
    ).toBe(4);
    expect(got).toBe(err);
    expect(retryDelaySeconds(() => -1, 1, err)).toMatchObject({
      seconds: 0,
      problem: expect.any(String),
    });
    expect(
      retryDelaySeconds(
        () => {
          throw new Error("bad");
        },
        1,
        err,
      ),
    ).toMatchObject({ seconds: 0, problem: expect.stringContaining("bad") });
  });
  it("a custom policy that throws or returns a value String() cannot print › retry now, with a problem (never a throw)", () => {
    const unprintable = Object.create(null) as object;
    expect(
      retryDelaySeconds(
        () => {
          throw unprintable;
        },
        1,
        new Error("x"),
      ),
    ).toMatchObject({ seconds: 0, problem: expect.stringContaining("custom retry policy threw") });
    expect(
      retryDelaySeconds(() => unprintable as unknown as number, 1, new Error("x")),
    ).toMatchObject({
      seconds: 0,
      problem: expect.stringContaining("custom retry policy threw"),
    });
  });
  it("rejects bad numbers at definition", () => {
    expect(() => assertRetryPolicy({ kind: "fixed", delay: -1 }, "j")).toThrow(/INVALID_OPTION/);
    expect(() => assertRetryPolicy({ kind: "exponential", jitter: 2 }, "j")).toThrow(
      /INVALID_OPTION/,
    );
  });
});
