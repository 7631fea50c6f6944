import { describe, expect, it } from "vitest";
import { ShutdownMachine } from "../../src/worker/shutdown-machine.js";

function machine(timeoutSeconds = 30) {
  let now = 1_000_000;
  const m = new ShutdownMachine(timeoutSeconds, () => now);
  return { m, advance: (ms: number) => (now += ms), now: () => now };
}

describe("shutdown state machine (fake clock)", () => {
  it("RUNNING → DRAINING → STOPPED when everything finishes", () => {
    const { m } = machine();
    expect(m.state).toBe("RUNNING");
    expect(m.requestStop("SIGTERM")).toEqual({ first: true, deadlineAt: 1_000_000 + 30_000 });
    expect(m.state).toBe("DRAINING");
    expect(m.settle()).toBe("drained");
    expect(m.state).toBe("STOPPED");
  });

  it("DRAINING → FORCE_TIMEOUT_PATH only once the deadline has passed", () => {
    const { m, advance } = machine(10);
    m.requestStop("SIGINT");
    advance(9_999);
    expect(m.checkDeadline()).toBe(false);
    expect(m.timeLeftMs()).toBe(1);
    advance(1);
    expect(m.checkDeadline()).toBe(true);
    expect(m.state).toBe("FORCE_TIMEOUT_PATH");
    expect(m.checkDeadline()).toBe(false);
    expect(m.settle()).toBe("shutdown_timeout");
  });

  it("the first signal owns the deadline; repeats are recorded and never extend it", () => {
    const { m, advance } = machine(30);
    const first = m.requestStop("SIGTERM");
    advance(20_000);
    const again = m.requestStop("SIGTERM");
    const third = m.requestStop("SIGINT");
    expect(again).toEqual({ first: false, deadlineAt: first.deadlineAt });
    expect(third.deadlineAt).toBe(first.deadlineAt);
    expect(m.signal).toBe("SIGTERM");
    expect(m.repeats).toEqual(["SIGTERM", "SIGINT"]);
    advance(10_000);
    expect(m.checkDeadline()).toBe(true);
  });

  it("effective deadline is min(job_timeout, time left), and says which fires", () => {
    const { m, now } = machine(30);
    expect(m.effectiveDeadline(now() + 5_000)).toEqual({ at: now() + 5_000, by: "job_timeout" });
    expect(m.effectiveDeadline(null)).toBeNull();
    m.requestStop("SIGTERM");
    expect(m.effectiveDeadline(now() + 5_000)).toEqual({ at: now() + 5_000, by: "job_timeout" });
    expect(m.effectiveDeadline(now() + 60_000)).toEqual({
      at: now() + 30_000,
      by: "shutdown_timeout",
    });
    expect(m.effectiveDeadline(null)).toEqual({ at: now() + 30_000, by: "shutdown_timeout" });
  });

  it("settle is a no-op while RUNNING", () => {
    const { m } = machine();
    expect(m.settle()).toBeUndefined();
    expect(m.state).toBe("RUNNING");
  });

  it("sync branch: FORCE_TIMEOUT_PATH → WAIT_FOR_THREAD with a flat grace from the force instant", () => {
    let now = 0;
    const m = new ShutdownMachine(30, () => now, 300);
    m.requestStop("SIGTERM");
    expect(m.waitForThreads()).toBeUndefined(); // not before the deadline
    now = 30_000;
    expect(m.checkDeadline()).toBe(true);
    now = 30_500; // the async branch's settle window passes first
    // Flat: force instant + grace, not min(remaining shutdown time (0), grace).
    expect(m.waitForThreads()).toEqual({ graceEndsAt: 30_000 + 300_000 });
    expect(m.state).toBe("WAIT_FOR_THREAD");
    now = 329_999;
    expect(m.graceExpired()).toBe(false);
    now = 330_000;
    expect(m.graceExpired()).toBe(true);
    // Grace expiry does not stop anything: the wait goes on until the threads return.
    expect(m.state).toBe("WAIT_FOR_THREAD");
    now = 10_000_000;
    expect(m.settle()).toBe("shutdown_timeout");
    expect(m.state).toBe("STOPPED");
  });

  it("a zero grace means WAIT_FOR_THREAD is unbounded from the start", () => {
    let now = 0;
    const m = new ShutdownMachine(1, () => now, 0);
    m.requestStop("SIGINT");
    now = 1000;
    m.checkDeadline();
    expect(m.waitForThreads()).toEqual({ graceEndsAt: 1000 });
    expect(m.graceExpired()).toBe(true);
    expect(m.state).toBe("WAIT_FOR_THREAD");
  });

  it("signals during WAIT_FOR_THREAD are repeats and change nothing", () => {
    let now = 0;
    const m = new ShutdownMachine(1, () => now, 5);
    m.requestStop("SIGTERM");
    now = 1000;
    m.checkDeadline();
    m.waitForThreads();
    expect(m.requestStop("SIGTERM")).toEqual({ first: false, deadlineAt: 1000 });
    expect(m.graceEndsAt).toBe(6000);
    expect(m.state).toBe("WAIT_FOR_THREAD");
  });
});
