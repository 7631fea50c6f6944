/**
 * Crash recovery's shared decision (src/backends/shared/recovery-policy.ts), on its own: cancel,
 * charge only a known start, dead-letter past the crash-loop limit, else requeue; and the
 * contract's answer built from the rows the engine's fenced writes changed.
 */
import { describe, expect, it } from "vitest";
import {
  decideRecovery,
  recoveryResult,
  type StaleClaim,
} from "../../src/backends/shared/recovery-policy.js";
import { crashLoopMessage, crashLoopRule } from "../../src/maintenance/policy.js";

/** A stale claim with a known start, no cancel request and no interruptions, plus `over`. */
function claim(over: Partial<StaleClaim> = {}): StaleClaim {
  return {
    id: "j1",
    name: "send",
    queue: "mail",
    workerId: "w-dead",
    claimToken: "t1",
    interruptions: 0,
    startKnown: true,
    cancelRequested: false,
    ...over,
  };
}

describe("decideRecovery", () => {
  it("a known start under the limit › requeued, charged one interruption", () => {
    const decision = decideRecovery(claim({ interruptions: 1 }), crashLoopRule(3));
    expect(decision).toMatchObject({ kind: "requeue" });
    expect(decision.job).toEqual({
      id: "j1",
      name: "send",
      queue: "mail",
      previousOwner: "w-dead",
      interruptions: 2,
      charged: true,
    });
  });

  it("a known start reaching the limit › still requeued (interruptions + 1 = maxInterruptions)", () => {
    const decision = decideRecovery(claim({ interruptions: 2 }), crashLoopRule(3));
    expect(decision).toMatchObject({ kind: "requeue", job: { interruptions: 3, charged: true } });
  });

  it("a known start past the limit › dead-lettered with the crash-loop reason and text", () => {
    const decision = decideRecovery(claim({ interruptions: 3 }), crashLoopRule(3));
    expect(decision).toEqual({
      kind: "deadLetter",
      claim: claim({ interruptions: 3 }),
      job: expect.objectContaining({ interruptions: 4, charged: true, previousOwner: "w-dead" }),
      reason: "crash_loop",
      error: crashLoopMessage(4),
    });
  });

  it("maxInterruptions 0 › the first charged recovery dead-letters", () => {
    expect(decideRecovery(claim(), crashLoopRule(0))).toMatchObject({
      kind: "deadLetter",
      job: { interruptions: 1 },
    });
  });

  it("an unknown start › requeued uncharged, interruptions unchanged, whatever the limit", () => {
    const decision = decideRecovery(
      claim({ startKnown: false, interruptions: 9 }),
      crashLoopRule(0),
    );
    expect(decision).toMatchObject({
      kind: "requeue",
      job: { interruptions: 9, charged: false },
    });
  });

  it("a cancel request › cancelled, uncharged, even past the limit and with a known start", () => {
    const decision = decideRecovery(
      claim({ cancelRequested: true, interruptions: 5 }),
      crashLoopRule(0),
    );
    expect(decision).toMatchObject({
      kind: "cancel",
      job: { interruptions: 5, charged: false },
    });
  });

  it("an unknown owner › previousOwner null, the claim kept for the fence", () => {
    const stale = claim({ workerId: null, claimToken: null });
    const decision = decideRecovery(stale, crashLoopRule(3));
    expect(decision.job.previousOwner).toBeNull();
    expect(decision.claim).toBe(stale);
  });

  it("a message with the placeholder twice › both filled in", () => {
    const rule = { maxInterruptions: 0, reason: "r", message: "{interruptions}/{interruptions}" };
    expect(decideRecovery(claim({ interruptions: 6 }), rule)).toMatchObject({ error: "7/7" });
  });
});

describe("recoveryResult", () => {
  const claims = [
    claim({ id: "a" }),
    claim({ id: "b", cancelRequested: true }),
    claim({ id: "c", interruptions: 3 }),
    claim({ id: "d", startKnown: false }),
    claim({ id: "e", interruptions: 1 }),
  ];
  const decisions = claims.map((c) => decideRecovery(c, crashLoopRule(3)));

  it("lists each decision under its kind, in decision order", () => {
    const result = recoveryResult(decisions, new Set(["a", "b", "c", "d", "e"]));
    expect(result.requeued.map((j) => [j.id, j.interruptions, j.charged])).toEqual([
      ["a", 1, true],
      ["d", 0, false],
      ["e", 2, true],
    ]);
    expect(result.cancelled.map((j) => j.id)).toEqual(["b"]);
    expect(result.deadLettered).toMatchObject([{ id: "c", interruptions: 4, charged: true }]);
  });

  it("reports only the rows whose fenced write changed them", () => {
    const result = recoveryResult(decisions, new Set(["b", "e"]));
    expect(result.requeued.map((j) => j.id)).toEqual(["e"]);
    expect(result.cancelled.map((j) => j.id)).toEqual(["b"]);
    expect(result.deadLettered).toEqual([]);
    expect(recoveryResult(decisions, new Set())).toEqual({
      requeued: [],
      deadLettered: [],
      cancelled: [],
    });
    expect(recoveryResult([], new Set(["a"]))).toEqual({
      requeued: [],
      deadLettered: [],
      cancelled: [],
    });
  });
});
