// The running jobs' deadline watches of one machine: told of a transition in the order they
// began, never after they ended — also when one watch's handler ends another mid-transition.
import { describe, expect, it } from "vitest";
import { watchJobDeadlines } from "../../src/worker/job-deadline.js";
import { ShutdownMachine } from "../../src/worker/shutdown-machine.js";

describe("watchJobDeadlines (one machine, many jobs)", () => {
  it("FORCE_TIMEOUT_PATH › only open watches are forced, in the order they began", () => {
    let now = 0;
    const machine = new ShutdownMachine(1, () => now);
    const forced: number[] = [];
    const ends: Array<() => void> = [];
    for (let i = 0; i < 6; i++) {
      ends.push(
        watchJobDeadlines(machine, 300, {
          onJobTimeout: () => {
            throw new Error("no job timeout expected");
          },
          onForce: () => {
            forced.push(i);
            // Watch 0's handler ends watch 3 while the transition is being told.
            if (i === 0) ends[3]?.();
          },
        }),
      );
    }
    ends[1]?.();
    ends[4]?.();
    ends[4]?.(); // idempotent
    machine.requestStop("SIGTERM");
    expect(forced).toEqual([]);
    now = 1_500;
    expect(machine.checkDeadline()).toBe(true);
    expect(forced).toEqual([0, 2, 5]);
    // A watch begun after FORCE_TIMEOUT_PATH is forced at once; ended ones stay quiet.
    const late: string[] = [];
    watchJobDeadlines(machine, 300, {
      onJobTimeout: () => late.push("timeout"),
      onForce: () => late.push("force"),
    });
    expect(late).toEqual(["force"]);
    expect(forced).toEqual([0, 2, 5]);
  });

  it("a job timeout fires for its own watch only, and an ended watch's never fires", async () => {
    const machine = new ShutdownMachine(30, Date.now);
    const fired: string[] = [];
    const endA = watchJobDeadlines(machine, 0.02, {
      onJobTimeout: () => fired.push("a"),
      onForce: () => fired.push("a-force"),
    });
    watchJobDeadlines(machine, 0.03, {
      onJobTimeout: () => fired.push("b"),
      onForce: () => fired.push("b-force"),
    });
    endA();
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(fired).toEqual(["b"]);
  });
});
