/** The pure rules of remote jobs: phases, dispositions, admission, circuit breaker, results. */
import { describe, expect, it } from "vitest";
import { admissionDecision } from "../../src/backends/contract/admission.js";
import {
  assertTransition,
  canTransition,
  PHASE_TRANSITIONS,
  parsePhase,
  phasesInto,
} from "../../src/backends/contract/phases.js";
import { assertAdmissionBudget } from "../../src/remote/admission.js";
import { assertCircuitOptions, CircuitBreaker } from "../../src/remote/circuit-breaker.js";
import { DISPOSITIONS, dispositionOf } from "../../src/remote/dispositions.js";
import {
  checkPollResult,
  checkReconcileResult,
  checkSubmitResult,
  failed,
  MAX_TASK_ID_LENGTH,
} from "../../src/remote/results.js";

describe("phases", () => {
  it("transition table › the phase order › only forward moves; finished is terminal", () => {
    expect(canTransition("none", "submitting")).toBe(true);
    expect(canTransition("submitting", "accepted")).toBe(true);
    expect(canTransition("submitting", "frozen")).toBe(true);
    expect(canTransition("frozen", "accepted")).toBe(true);
    expect(canTransition("accepted", "submitting")).toBe(false);
    expect(canTransition("accepted", "frozen")).toBe(false);
    expect(PHASE_TRANSITIONS.finished).toEqual([]);
    expect(phasesInto("submitting").sort()).toEqual(["none", "released"]);
    expect(() => assertTransition("finished", "accepted")).toThrow(
      expect.objectContaining({ code: "ILLEGAL_PHASE" }),
    );
  });

  it("parsePhase › unknown text › UNKNOWN_PHASE", () => {
    expect(parsePhase("frozen")).toBe("frozen");
    expect(() => parsePhase("claimed")).toThrow(expect.objectContaining({ code: "UNKNOWN_PHASE" }));
    expect(() => parsePhase(3)).toThrow(expect.objectContaining({ code: "UNKNOWN_PHASE" }));
  });
});

describe("dispositions", () => {
  it("one table for both clocks › claimed release, submitting freeze, accepted hand-off", () => {
    expect(DISPOSITIONS).toEqual({ claimed: "release", submitting: "freeze", accepted: "handoff" });
    for (const clock of ["deadline", "crash"] as const) {
      expect(dispositionOf("submitting", clock)).toBe("freeze");
    }
  });
});

describe("admission", () => {
  it("budget › in flight at the limit › refused (concurrency), rate next, else admitted", () => {
    expect(admissionDecision({ inFlight: 2, lastMinute: 0 }, { maxConcurrent: 2 })).toMatchObject({
      admit: false,
      reason: "concurrency",
    });
    expect(admissionDecision({ inFlight: 0, lastMinute: 5 }, { perMinute: 5 })).toMatchObject({
      admit: false,
      reason: "rate",
    });
    expect(
      admissionDecision({ inFlight: 1, lastMinute: 4 }, { maxConcurrent: 2, perMinute: 5 }),
    ).toEqual({ admit: true });
    expect(admissionDecision({ inFlight: 99, lastMinute: 99 }, undefined)).toEqual({ admit: true });
  });

  it("budget › bad values › INVALID_OPTION", () => {
    expect(() => assertAdmissionBudget({ maxConcurrent: 0 }, "j")).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
    expect(() => assertAdmissionBudget({ perSecond: 1 }, "j")).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
  });
});

describe("circuit breaker", () => {
  it("failures within the window › open; after the cooldown › one trial (half-open); its success closes", () => {
    let now = 0;
    const breaker = new CircuitBreaker(
      { failureThreshold: 2, windowSeconds: 10, cooldownSeconds: 5 },
      () => now,
    );
    breaker.recordFailure();
    now = 20_000; // the first failure fell out of the window
    breaker.recordFailure();
    expect(breaker.state).toBe("closed");
    breaker.recordFailure();
    expect(breaker.state).toBe("open");
    expect(breaker.allow()).toEqual({ allowed: false, retryInSeconds: 5 });
    now += 5_000;
    expect(breaker.state).toBe("half_open");
    expect(breaker.allow()).toEqual({ allowed: true });
    expect(breaker.allow().allowed).toBe(false);
    breaker.recordSuccess();
    expect(breaker.state).toBe("closed");
  });

  it("half-open trial fails › open again for a full cooldown", () => {
    let now = 0;
    const breaker = new CircuitBreaker(
      { failureThreshold: 1, windowSeconds: 10, cooldownSeconds: 5 },
      () => now,
    );
    breaker.recordFailure();
    now = 5_000;
    expect(breaker.allow().allowed).toBe(true);
    breaker.recordFailure();
    expect(breaker.state).toBe("open");
    now = 9_000;
    expect(breaker.state).toBe("open");
  });

  it("options › non-positive › INVALID_OPTION", () => {
    expect(() =>
      assertCircuitOptions({ failureThreshold: 1, windowSeconds: 0, cooldownSeconds: 1 }, "j"),
    ).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
  });
});

describe("results", () => {
  it("checks › unusable values › INVALID_RESULT", () => {
    expect(() => checkSubmitResult({ kind: "accepted" })).toThrow(
      expect.objectContaining({ code: "INVALID_RESULT" }),
    );
    expect(() =>
      checkSubmitResult({ kind: "accepted", taskId: "x".repeat(MAX_TASK_ID_LENGTH + 1) }),
    ).toThrow(expect.objectContaining({ code: "INVALID_RESULT" }));
    expect(() => checkSubmitResult("tsk")).toThrow(
      expect.objectContaining({ code: "INVALID_RESULT" }),
    );
    expect(() => checkPollResult({ kind: "accepted", taskId: "t" })).toThrow(
      expect.objectContaining({ code: "INVALID_RESULT" }),
    );
    expect(() => checkReconcileResult({ kind: "pending" })).toThrow(
      expect.objectContaining({ code: "INVALID_RESULT" }),
    );
    expect(failed(new Error("nope"), { retry: true })).toEqual({
      kind: "failed",
      error: "nope",
      retry: true,
    });
  });
});
