// The start/stop stress (helpers/service-stress.ts) on every maintenance service, on the memory
// backend.
import { pino } from "pino";
import { describe, it } from "vitest";
import { Elector } from "../../src/maintenance/elector.js";
import { createMaintenance } from "../../src/maintenance/maintenance.js";
import { Pruner } from "../../src/maintenance/pruner.js";
import { QueueSampler } from "../../src/maintenance/queue-sampler.js";
import { Rescuer } from "../../src/maintenance/rescuer.js";
import { WorkerReaper } from "../../src/maintenance/worker-reaper.js";
import { EventBus } from "../../src/observability/event-bus.js";
import type { SoniqEventMap } from "../../src/observability/events.js";
import { stressStartStop } from "../helpers/service-stress.js";
import { memoryBackend } from "../helpers/test-backends.js";

const logger = pino({ level: "silent" });

describe("maintenance services", () => {
  it("elector › concurrent starts and stops › always ends idle", async () => {
    const backend = await memoryBackend();
    await stressStartStop(() => new Elector({ backend, holder: "a", logger, intervalMs: 3 }));
  });

  it("maintainer › concurrent starts and stops, leading › always ends idle", async () => {
    await stressStartStop(
      async () =>
        createMaintenance({
          backend: await memoryBackend(),
          workerId: "a",
          settings: { heartbeatInterval: 0.005, heartbeatTimeout: 0.05, maxInterruptions: 3 },
          logger,
          healthyForSeconds: () => 1,
        }).service,
    );
  });

  it("rescuer › concurrent starts and stops › always ends idle", async () => {
    const backend = await memoryBackend();
    await stressStartStop(
      () =>
        new Rescuer({
          backend,
          logger,
          intervalMs: 3,
          heartbeatTimeoutSeconds: 0.05,
          maxInterruptions: 3,
        }),
    );
  });

  it("pruner › concurrent starts and stops › always ends idle", async () => {
    const backend = await memoryBackend();
    await stressStartStop(() => new Pruner({ backend, logger, intervalMs: 3 }));
  });

  it("worker reaper › concurrent starts and stops › always ends idle", async () => {
    const backend = await memoryBackend();
    await stressStartStop(() => new WorkerReaper({ backend, logger, intervalMs: 3 }));
  });

  it("queue sampler › concurrent starts and stops, sampling › always ends idle", async () => {
    const backend = await memoryBackend();
    const events = new EventBus<SoniqEventMap>(logger);
    events.on("queue_metrics", () => undefined); // a listener, so every tick reads and emits
    await stressStartStop(
      () => new QueueSampler({ backend, workerId: "w1", events, logger, intervalMs: 3 }),
    );
  });
});
