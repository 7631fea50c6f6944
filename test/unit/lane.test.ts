// The maintenance lane (src/lifecycle/lane.ts): one call at a time, in order; and the laned view of
// a backend-shaped object.
import { describe, expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { Lane, LaneDroppedError, type Laned, laned } from "../../src/lifecycle/lane.js";
import { laneCallBoundMs } from "../../src/maintenance/maintenance.js";

/** A promise and its resolve. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** A timer the test fires by hand: each started timer, whether it was cancelled, and its fire. */
function manualTimers() {
  const started: { ms: number; fire: () => void; cancelled: boolean }[] = [];
  const timer = (fire: () => void, ms: number) => {
    const entry = { ms, fire, cancelled: false };
    started.push(entry);
    return () => {
      entry.cancelled = true;
    };
  };
  return { started, timer };
}

/** Lets every pending promise callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("lane", () => {
  it("lane › calls made at once › run one at a time in the order made", async () => {
    const lane = new Lane();
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const call = (name: string, ms: number) =>
      lane.run(async () => {
        running += 1;
        most = Math.max(most, running);
        log.push(`start ${name}`);
        await new Promise((resolve) => setTimeout(resolve, ms));
        log.push(`end ${name}`);
        running -= 1;
        return name;
      });
    const results = await Promise.all([call("a", 20), call("b", 1), call("c", 5)]);
    expect(results).toEqual(["a", "b", "c"]);
    expect(most).toBe(1);
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
    expect(lane.pending).toBe(0);
  });

  it("lane › a call fails › its caller gets the error and the next call still runs", async () => {
    const lane = new Lane();
    const failed = lane.run(async () => {
      throw new Error("boom");
    });
    const thrown = lane.run(() => {
      throw new Error("sync boom");
    });
    const next = lane.run(async () => "next");
    await expect(failed).rejects.toThrow("boom");
    await expect(thrown).rejects.toThrow("sync boom");
    await expect(next).resolves.toBe("next");
  });

  it("lane › a call held up › later calls wait for it, and only for it", async () => {
    const lane = new Lane();
    const held = gate();
    const first = lane.run(() => held.promise);
    let secondRan = false;
    const second = lane.run(async () => {
      secondRan = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(secondRan).toBe(false);
    expect(lane.pending).toBe(2);
    held.open();
    await first;
    await second;
    expect(secondRan).toBe(true);
  });

  it("lane › dropped while calls wait › the running call finishes, the waiting ones never run, later ones do", async () => {
    const lane = new Lane();
    const held = gate();
    const ran: string[] = [];
    const running = lane.run(async () => {
      await held.promise;
      ran.push("running");
    });
    const waiting = lane.run(async () => {
      ran.push("waiting");
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    lane.drop();
    const later = lane.run(async () => {
      ran.push("later");
    });
    held.open();
    await running;
    await expect(waiting).rejects.toBeInstanceOf(LaneDroppedError);
    await later;
    expect(ran).toEqual(["running", "later"]);
    expect(lane.pending).toBe(0);
  });

  it("laned view › methods of the object and of admin, flows, submissions › run in the lane on the object itself", async () => {
    const lane = new Lane();
    const held = gate();
    class Store {
      readonly kind = "fake";
      readonly notifier = { subscribe: () => "sync" };
      readonly admin = {
        calls: 0,
        async queueList(): Promise<number> {
          this.calls += 1;
          return this.calls;
        },
      };
      private count = 0;
      async jobPruneFinished(limit: number): Promise<number> {
        this.count += limit;
        return this.count;
      }
    }
    const store = new Store();
    const view = laned(store, lane);
    expect(view.kind).toBe("fake");
    // Members other than admin, flows and submissions are the object's own (not laned).
    expect(view.notifier).toBe(store.notifier);
    expect(view.notifier.subscribe()).toBe("sync");
    const blocker = lane.run(() => held.promise);
    const pruned = view.jobPruneFinished(5);
    const listed = view.admin.queueList();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Both wait behind the call holding the lane.
    expect(store.admin.calls).toBe(0);
    expect(lane.pending).toBe(3);
    held.open();
    await blocker;
    await expect(pruned).resolves.toBe(5);
    await expect(listed).resolves.toBe(1);
    // `this` is the object (its private state), not the view.
    await expect(view.jobPruneFinished(2)).resolves.toBe(7);
    expect(view.admin).toBe(view.admin);
  });
  it("lane › a call past its bound › the next call starts beside it; the late call still settles as it does", async () => {
    const { started, timer } = manualTimers();
    const overruns: [string | undefined, number][] = [];
    const lane = new Lane({
      callBoundMs: 250,
      timer,
      onOverrun: (name, ms) => overruns.push([name, ms]),
    });
    const held = gate();
    const stuck = lane.run(async () => {
      await held.promise;
      return "late";
    }, "jobPruneFinished");
    let nextRan = false;
    const next = lane.run(async () => {
      nextRan = true;
      return "next";
    }, "jobRecoverStale");
    await settle();
    // The bound is timed from the call's start; the next call waits until it passes.
    expect(started.map((t) => t.ms)).toEqual([250]);
    expect(nextRan).toBe(false);
    started[0]?.fire();
    await expect(next).resolves.toBe("next");
    expect(overruns).toEqual([["jobPruneFinished", 250]]);
    // The next call had its own bound and settled within it: cancelled, never reported.
    expect(started).toHaveLength(2);
    expect(started[1]?.cancelled).toBe(true);
    // The overrun call was not abandoned: still pending, and its caller gets its own result.
    expect(lane.pending).toBe(1);
    held.open();
    await expect(stuck).resolves.toBe("late");
    expect(lane.pending).toBe(0);
    expect(overruns).toHaveLength(1);
  });

  it("lane › calls within their bound, or failing at once › no overrun, each timer cancelled, order kept", async () => {
    const { started, timer } = manualTimers();
    let overruns = 0;
    const lane = new Lane({ callBoundMs: 1_000, timer, onOverrun: () => (overruns += 1) });
    const log: string[] = [];
    const a = lane.run(async () => log.push("a"));
    const b = lane.run(() => {
      throw new Error("sync boom");
    });
    const c = lane.run(async () => {
      throw new Error("boom");
    });
    const d = lane.run(async () => log.push("d"));
    await a;
    await expect(b).rejects.toThrow("sync boom");
    await expect(c).rejects.toThrow("boom");
    await d;
    expect(log).toEqual(["a", "d"]);
    expect(started).toHaveLength(4);
    expect(started.every((t) => t.cancelled)).toBe(true);
    expect(overruns).toBe(0);
  });

  it("lane › no bound (Infinity) › no timer; a bad bound is refused", async () => {
    const { started, timer } = manualTimers();
    const lane = new Lane({ callBoundMs: Number.POSITIVE_INFINITY, timer });
    await expect(lane.run(async () => 1)).resolves.toBe(1);
    expect(started).toEqual([]);
    for (const bad of [0, -1, Number.NaN]) {
      expect(() => new Lane({ callBoundMs: bad })).toThrow(RangeError);
    }
  });

  it("lane › a dropped call past the drop › never started, so never timed", async () => {
    const { started, timer } = manualTimers();
    const lane = new Lane({ callBoundMs: 100, timer });
    const held = gate();
    const running = lane.run(() => held.promise);
    const waiting = lane.run(async () => "never");
    await settle();
    lane.drop();
    held.open();
    await running;
    await expect(waiting).rejects.toBeInstanceOf(LaneDroppedError);
    expect(started).toHaveLength(1);
  });

  it("maintenance lane bound › one heartbeat interval, at least 1 s", () => {
    expect(laneCallBoundMs(5)).toBe(5_000);
    expect(laneCallBoundMs(0.02)).toBe(1_000);
    expect(laneCallBoundMs(60)).toBe(60_000);
  });

  it("laned view › a synchronous method is not offered (a compile error); a backend is assignable to its view's type", () => {
    const lane = new Lane();
    const store = {
      now: (): number => 1,
      later: async (): Promise<number> => 2,
      admin: { subscribe: (): (() => void) => () => undefined, read: async () => 3 },
      notifier: { subscribe: (): string => "sync" },
    };
    const view = laned(store, lane);
    // @ts-expect-error a synchronous method would return a promise through the view
    void view.now;
    // @ts-expect-error the same in a laned member store
    void view.admin.subscribe;
    // Members the view returns as they are keep their synchronous methods.
    expect(view.notifier.subscribe()).toBe("sync");
    // Code that takes a laned view (the maintenance services) takes the backend itself too.
    const backend = { kind: "fake" } as unknown as Backend;
    const asView: Laned<Backend> = backend;
    expect(asView.kind).toBe("fake");
  });
});
