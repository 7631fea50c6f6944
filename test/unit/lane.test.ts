// The maintenance lane (src/lifecycle/lane.ts): one call at a time, in order; and the laned view of
// a backend-shaped object.
import { describe, expect, it } from "vitest";
import { Lane, LaneDroppedError, laned } from "../../src/lifecycle/lane.js";

/** A promise and its resolve. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

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
});
