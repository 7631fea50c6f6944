/** Unit tests of the typed, guarded event bus (src/observability/event-bus.ts). */
import { pino } from "pino";
import { describe, expect, expectTypeOf, it } from "vitest";
import { EventBus } from "../../src/observability/event-bus.js";
import type { SoniqEventMap } from "../../src/observability/events.js";
import { waitForEvent } from "../helpers/events.js";

type TestMap = {
  ping: { n: number };
  pong: { text: string };
};

function capturingBus<M extends Record<string, object> = TestMap>() {
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: "warn" },
    { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { bus: new EventBus<M>(logger), logs };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("event bus", () => {
  it("on › a listener subscribed by name › receives that event's typed payloads, in order", () => {
    const { bus } = capturingBus();
    const seen: number[] = [];
    bus.on("ping", (payload) => {
      expectTypeOf(payload).toEqualTypeOf<Readonly<{ n: number }>>();
      seen.push(payload.n);
    });
    bus.on("pong", () => seen.push(-1));
    bus.emit("ping", { n: 1 });
    bus.emit("ping", { n: 2 });
    expect(seen).toEqual([1, 2]);
  });

  it("emit › a name or payload outside the map › does not compile", () => {
    const { bus } = capturingBus();
    // @ts-expect-error: not an event of the map
    bus.emit("nope", { n: 1 });
    // @ts-expect-error: the payload of ping has no text
    bus.emit("ping", { text: "x" });
    // @ts-expect-error: a listener of ping cannot read pong's fields
    bus.on("ping", (payload) => payload.text);
    const soniq = new EventBus<SoniqEventMap>(pino({ level: "silent" }));
    soniq.on("job_done", (e) => {
      expectTypeOf(e.duration_ms).toEqualTypeOf<number | undefined>();
    });
  });

  it("unsubscribe › called (twice) › the listener gets no later events and others keep theirs", () => {
    const { bus } = capturingBus();
    const a: number[] = [];
    const b: number[] = [];
    const offA = bus.on("ping", (p) => void a.push(p.n));
    bus.on("ping", (p) => void b.push(p.n));
    bus.emit("ping", { n: 1 });
    offA();
    offA();
    bus.emit("ping", { n: 2 });
    expect(a).toEqual([1]);
    expect(b).toEqual([1, 2]);
  });

  it("once › two emits › the listener runs for the first only; its unsubscribe cancels it", () => {
    const { bus } = capturingBus();
    const seen: number[] = [];
    bus.once("ping", (p) => void seen.push(p.n));
    const cancel = bus.once("ping", (p) => void seen.push(100 + p.n));
    cancel();
    bus.emit("ping", { n: 1 });
    bus.emit("ping", { n: 2 });
    expect(seen).toEqual([1]);
    expect(bus.hasListeners("ping")).toBe(false);
  });

  it("onAny › events of every name › receives (name, payload) after the named listeners", () => {
    const { bus } = capturingBus();
    const seen: string[] = [];
    bus.on("ping", () => void seen.push("named"));
    const off = bus.onAny((name, payload) => {
      if (name === "ping") seen.push(`any ping ${payload.n}`);
      else seen.push(`any pong ${payload.text}`);
    });
    bus.emit("ping", { n: 1 });
    bus.emit("pong", { text: "x" });
    off();
    bus.emit("ping", { n: 2 });
    expect(seen).toEqual(["named", "any ping 1", "any pong x", "named"]);
  });

  it("hasListeners › by name and catch-all › true only while someone would receive the event", () => {
    const { bus } = capturingBus();
    expect(bus.hasListeners("ping")).toBe(false);
    const off = bus.on("ping", () => undefined);
    expect(bus.hasListeners("ping")).toBe(true);
    expect(bus.hasListeners("pong")).toBe(false);
    off();
    expect(bus.hasListeners("ping")).toBe(false);
    const offAny = bus.onAny(() => undefined);
    expect(bus.hasListeners("pong")).toBe(true);
    offAny();
    expect(bus.hasListeners("pong")).toBe(false);
  });

  it("emit › a listener throws (even a value with no toString) › logged once, later listeners still called, emit does not throw", () => {
    const { bus, logs } = capturingBus();
    const seen: string[] = [];
    bus.on("ping", () => {
      throw new Error("listener broke");
    });
    bus.on("ping", () => {
      throw Object.create(null);
    });
    bus.on("ping", () => void seen.push("after"));
    bus.onAny(() => void seen.push("any"));
    expect(() => bus.emit("ping", { n: 1 })).not.toThrow();
    expect(seen).toEqual(["after", "any"]);
    expect(logs).toHaveLength(2);
    expect(logs[0]).toMatchObject({ event: "ping", msg: "event listener failed; ignored" });
    expect(String(logs[0]?.err)).toContain("listener broke");
    expect(String(logs[1]?.err)).toContain("non-Error thrown");
  });

  it("emit › an async listener rejects › the rejection is caught and logged, never unhandled", async () => {
    const { bus, logs } = capturingBus();
    let later = false;
    bus.on("ping", async () => {
      await flush();
      throw new Error("async listener broke");
    });
    bus.on("ping", () => {
      later = true;
    });
    bus.emit("ping", { n: 1 });
    expect(later).toBe(true);
    await flush();
    await flush();
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ event: "ping" });
    expect(String(logs[0]?.err)).toContain("async listener broke");
  });

  it("emit › a listener subscribes or unsubscribes during the emit › the change applies from the next emit", () => {
    const { bus } = capturingBus();
    const seen: string[] = [];
    let offB: () => void = () => undefined;
    bus.on("ping", () => {
      seen.push("a");
      offB();
      bus.on("ping", () => void seen.push("c"));
    });
    offB = bus.on("ping", () => void seen.push("b"));
    bus.emit("ping", { n: 1 });
    expect(seen).toEqual(["a", "b"]);
  });

  it("waitForEvent › a predicate › resolves with the first matching payload; times out otherwise", async () => {
    const { bus } = capturingBus();
    const second = waitForEvent(bus, "ping", (p) => p.n === 2);
    bus.emit("ping", { n: 1 });
    bus.emit("ping", { n: 2 });
    await expect(second).resolves.toEqual({ n: 2 });
    expect(bus.hasListeners("ping")).toBe(false);
    await expect(waitForEvent(bus, "pong", () => true, 20)).rejects.toThrow(/timed out/);
    expect(bus.hasListeners("pong")).toBe(false);
  });
});
