// The Service base and PeriodicService: double start, stop before start, stop during a tick,
// the named bound, and the stress every service runs.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { SoniqError } from "../../src/errors.js";
import { PeriodicService } from "../../src/lifecycle/periodic-service.js";
import { BaseService, sleep } from "../../src/lifecycle/service.js";
import { stressStartStop } from "../helpers/service-stress.js";

const logger = pino({ level: "silent" });

class CountingService extends BaseService {
  starts = 0;
  stops = 0;
  constructor(private readonly stuckMs = 0) {
    super({ name: "counting", logger, stopBoundMs: 200 });
  }
  protected override onStart(): void {
    this.starts += 1;
  }
  protected async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) await sleep(5, signal);
    if (this.stuckMs) await new Promise((r) => setTimeout(r, this.stuckMs));
  }
  protected override onStopped(): void {
    this.stops += 1;
  }
}

describe("BaseService", () => {
  it("start › twice while running › one start", async () => {
    const s = new CountingService();
    await Promise.all([s.start(), s.start(), s.start()]);
    expect(s.starts).toBe(1);
    await s.stop();
    expect(s.stops).toBe(1);
  });

  it("stop › before start › resolves and stays idle", async () => {
    const s = new CountingService();
    await s.stop();
    expect(s.state).toBe("idle");
    expect(s.stops).toBe(0);
  });

  it("stop › body ignores the bound › returns after the bound", async () => {
    const s = new CountingService(5_000);
    await s.start();
    const t = Date.now();
    await s.stop(150);
    expect(Date.now() - t).toBeLessThan(1_000);
    expect(s.state).toBe("idle");
  });

  it("start › onStart throws › stays idle and the error reaches the caller", async () => {
    class Refusing extends CountingService {
      protected override onStart(): void {
        throw new Error("no");
      }
    }
    const s = new Refusing();
    await expect(s.start()).rejects.toThrow("no");
    expect(s.state).toBe("idle");
  });

  it("stress › concurrent starts and stops › always ends idle", async () => {
    await stressStartStop(() => new CountingService());
  });
});

describe("PeriodicService", () => {
  it("stop › during a tick › waits for the tick, then no more ticks", async () => {
    let ticks = 0;
    let inTick = false;
    const s = new PeriodicService({
      name: "p",
      logger,
      intervalMs: 1,
      immediately: true,
      tick: async (signal) => {
        inTick = true;
        ticks += 1;
        await sleep(50);
        // a unit of work checks the signal between its steps
        if (signal.aborted) {
          inTick = false;
          return;
        }
        inTick = false;
      },
    });
    await s.start();
    await new Promise((r) => setTimeout(r, 10));
    expect(inTick).toBe(true);
    await s.stop();
    expect(inTick).toBe(false);
    const after = ticks;
    await new Promise((r) => setTimeout(r, 30));
    expect(ticks).toBe(after);
  });

  it("tick › throws › logged and the loop goes on", async () => {
    let ticks = 0;
    const s = new PeriodicService({
      name: "p",
      logger,
      intervalMs: 1,
      tick: async () => {
        ticks += 1;
        throw new Error("boom");
      },
    });
    await s.start();
    await new Promise((r) => setTimeout(r, 50));
    await s.stop();
    expect(ticks).toBeGreaterThan(1);
  });

  it("tick › fails with CLOSED after the stop › logged at debug, no retry warning", async () => {
    // A tick blocked on a call its lane abandoned (lane.ts) outlives the stop bound; the backend
    // is then closed and the call fails with CLOSED. Nothing will retry: not a warning.
    const lines: { level: number; msg: string }[] = [];
    const captured = pino(
      { level: "debug" },
      { write: (line: string) => lines.push(JSON.parse(line)) },
    );
    let fail: (err: unknown) => void = () => {};
    let started = false;
    const s = new PeriodicService({
      name: "p",
      logger: captured,
      intervalMs: 1,
      stopBoundMs: 10,
      tick: () => {
        started = true;
        return new Promise<void>((_, reject) => {
          fail = reject;
        });
      },
    });
    await s.start();
    while (!started) await sleep(1);
    await s.stop();
    fail(new SoniqError("CLOSED", "the backend was closed"));
    await sleep(10);
    const tickLines = lines.filter((l) => l.msg.includes("tick"));
    expect(tickLines.length).toBe(1);
    expect(tickLines.every((l) => l.level <= 20)).toBe(true);
    expect(tickLines.some((l) => l.msg.includes("will retry"))).toBe(false);
  });

  it("tick › fails with CLOSED while running › still a retry warning", async () => {
    const lines: { level: number; msg: string }[] = [];
    const captured = pino(
      { level: "debug" },
      { write: (line: string) => lines.push(JSON.parse(line)) },
    );
    const s = new PeriodicService({
      name: "p",
      logger: captured,
      intervalMs: 1000,
      immediately: true,
      tick: async () => {
        throw new SoniqError("CLOSED", "the backend was closed");
      },
    });
    await s.start();
    await sleep(10);
    await s.stop();
    expect(lines.some((l) => l.level === 40 && l.msg.includes("will retry"))).toBe(true);
  });

  it("runNow › while idle › does nothing", async () => {
    let ticks = 0;
    const s = new PeriodicService({
      name: "p",
      logger,
      intervalMs: 1000,
      tick: async () => {
        ticks += 1;
      },
    });
    await s.runNow();
    expect(ticks).toBe(0);
    await s.start();
    await s.runNow();
    expect(ticks).toBe(1);
    await s.stop();
  });

  it("stress › concurrent starts and stops › always ends idle", async () => {
    await stressStartStop(
      () =>
        new PeriodicService({
          name: "p",
          logger,
          intervalMs: 2,
          tick: async (signal) => {
            await sleep(3, signal);
          },
        }),
    );
  });
});
