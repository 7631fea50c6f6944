// ctx.signal is created on first read; an abort before that read is not lost.
import { describe, expect, it } from "vitest";
import { LazyAbortController } from "../../src/worker/lazy-abort-controller.js";

describe("LazyAbortController", () => {
  it("a signal read after the abort is already aborted, with the reason", () => {
    const c = new LazyAbortController();
    const reason = new Error("deadline");
    c.abort(reason);
    expect(c.signal.aborted).toBe(true);
    expect(c.signal.reason).toBe(reason);
  });

  it("a signal read before the abort fires its abort event once, with the first reason", () => {
    const c = new LazyAbortController();
    const { signal } = c;
    const seen: unknown[] = [];
    signal.addEventListener("abort", () => seen.push(signal.reason));
    expect(signal.aborted).toBe(false);
    const first = new Error("job timeout");
    c.abort(first);
    c.abort(new Error("later"));
    expect(seen).toEqual([first]);
    expect(c.signal).toBe(signal);
  });

  it("onAbort listeners run once each, in order; offAbort removes one (one or several held)", () => {
    const c = new LazyAbortController();
    const seen: string[] = [];
    const a = () => seen.push("a");
    const b = () => seen.push("b");
    const d = () => seen.push("d");
    c.onAbort(a);
    c.offAbort(a);
    c.offAbort(a);
    c.onAbort(a);
    c.onAbort(b);
    c.onAbort(d);
    c.offAbort(b);
    c.abort(new Error("cancel"));
    c.abort(new Error("again"));
    expect(seen).toEqual(["a", "d"]);
  });
});
