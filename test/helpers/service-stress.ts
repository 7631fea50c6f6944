/**
 * The start/stop stress every service must survive (docs/reliability.md, "One start/stop shape for
 * every background loop"; issue "One shape for every part"): many concurrent starts and stops, a
 * stop before any start, a stop while a unit of work is in flight, and a restart after a stop. Each
 * case asserts the service ends `idle`, that `stop()` never throws, and that it respects its bound.
 */
import { expect } from "vitest";
import type { Service } from "../../src/lifecycle/service.js";

/** Runs every case of the stress on services made by `make` (a fresh one per case). */
export async function stressStartStop(
  make: () => Service | Promise<Service>,
  options: { boundMs?: number; rounds?: number } = {},
): Promise<void> {
  const boundMs = options.boundMs ?? 2_000;
  const rounds = options.rounds ?? 20;

  // Stop before start: resolves at once, the service stays idle and can still start.
  {
    const s = await make();
    await s.stop(boundMs);
    expect(s.state).toBe("idle");
    await s.start();
    expect(s.state).toBe("running");
    await s.stop(boundMs);
    expect(s.state).toBe("idle");
  }

  // Many concurrent starts and stops: never throws, ends idle after a final stop.
  {
    const s = await make();
    const calls: Promise<void>[] = [];
    for (let i = 0; i < rounds; i += 1) {
      calls.push(i % 3 === 2 ? s.stop(boundMs) : s.start());
    }
    await Promise.all(calls);
    const started = Date.now();
    await s.stop(boundMs);
    expect(Date.now() - started).toBeLessThan(boundMs + 1_000);
    expect(s.state).toBe("idle");
  }

  // Start, let it work a little, stop while a unit may be in flight; restart; stop again.
  {
    const s = await make();
    for (let i = 0; i < 5; i += 1) {
      await s.start();
      await new Promise((r) => setTimeout(r, i * 7));
      const started = Date.now();
      await s.stop(boundMs);
      expect(Date.now() - started).toBeLessThan(boundMs + 1_000);
      expect(s.state).toBe("idle");
    }
  }
}
