/**
 * How a worker joins maintenance: its first try for the maintenance lease comes one
 * heartbeatInterval after its start (at most LEADERSHIP_SETTLE_MAX_MS), so its first claims do not
 * share the database with the leader's first passes; stopped before then, it never tries at all.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { EventBus } from "../../src/observability/event-bus.js";
import type { SoniqEventMap } from "../../src/observability/events.js";
import { resolveSettings } from "../../src/settings-resolution.js";
import {
  LEADERSHIP_SETTLE_MAX_MS,
  WorkerMaintenance,
} from "../../src/worker/worker-maintenance.js";
import { memoryBackend } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

/** A WorkerMaintenance over a memory backend whose lease tries are timed (ms after `start`). */
async function joined(heartbeatInterval: number) {
  const backend = await memoryBackend();
  const tries: number[] = [];
  let startedAt = 0;
  const take = backend.leaseTryTake.bind(backend);
  backend.leaseTryTake = (params) => {
    tries.push(performance.now() - startedAt);
    return take(params);
  };
  const logger = pino({ level: "silent" });
  const maintenance = new WorkerMaintenance({
    backend,
    workerId: "w1",
    settings: resolveSettings({ heartbeatInterval, heartbeatTimeout: 30 }, {}),
    logger,
    events: new EventBus<SoniqEventMap>(logger),
    healthySeconds: () => 0,
    now: () => Date.now(),
  });
  return {
    maintenance,
    tries,
    start() {
      startedAt = performance.now();
      maintenance.start();
    },
  };
}

describe("WorkerMaintenance", () => {
  it("settle › heartbeatInterval 0.3 s › the first lease try comes about 300 ms after start", async () => {
    const m = await joined(0.3);
    expect(m.maintenance.settleMs).toBe(300);
    m.start();
    await waitFor(() => m.tries.length > 0, 5000, "a lease try");
    expect(m.tries[0]).toBeGreaterThanOrEqual(290);
    expect(m.tries[0]).toBeLessThan(2000);
    await m.maintenance.stop();
  });

  it("settle › the default 5 s heartbeatInterval › capped at LEADERSHIP_SETTLE_MAX_MS", async () => {
    expect((await joined(5)).maintenance.settleMs).toBe(LEADERSHIP_SETTLE_MAX_MS);
  });

  it("stop › before the settle ends › never tries for the lease; a later start does nothing", async () => {
    const m = await joined(0.2);
    m.start();
    await m.maintenance.stop();
    m.maintenance.start();
    await new Promise((r) => setTimeout(r, 500));
    expect(m.tries).toEqual([]);
  });
});
