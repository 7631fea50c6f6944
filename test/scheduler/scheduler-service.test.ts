/**
 * The scheduler service: wakes at the next due instant, survives a throwing tick, stops with
 * nothing enqueued after its stop, and passes the start/stop stress.
 */
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type {
  ScheduleAdvanceParams,
  ScheduleDueParams,
  ScheduleStore,
} from "../../src/backends/contract/index.js";
import { Soniq } from "../../src/index.js";
import { Scheduler } from "../../src/scheduler/scheduler.js";
import { SchedulerService } from "../../src/scheduler/scheduler-service.js";
import { stressStartStop } from "../helpers/service-stress.js";
import { memoryBackend } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });
const unhandled: unknown[] = [];
const onUnhandled = (err: unknown) => unhandled.push(err);
process.on("unhandledRejection", onUnhandled);
afterEach(() => {
  expect(unhandled).toEqual([]);
});

async function everySecond() {
  const backend = await memoryBackend();
  const soniq = new Soniq({ backend, logger: silent, env: {} });
  const job = soniq.job({ name: "tick.job", handler: async () => "ok" });
  soniq.schedule({ id: "every.second", job, every: 1, args: {} });
  await soniq.schedules.sync();
  return { backend, soniq };
}

describe("scheduler service", () => {
  it("scheduler service › an every-1 s schedule › each occurrence enqueued within its grace, no polling in between", async () => {
    const { backend } = await everySecond();
    let reads = 0;
    const store: ScheduleStore = new Proxy<ScheduleStore>(backend, {
      get(target, prop, receiver) {
        if (prop === "scheduleDue") reads += 1;
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const service = new SchedulerService({
      scheduler: new Scheduler({ store, logger: silent }),
      logger: silent,
    });
    await service.start();
    await waitFor(async () => (await backend.jobStats()).total >= 3, 5_000, "three occurrences");
    await service.stop();
    const runs = await backend.scheduleRuns({ id: "every.second", limit: 100 });
    expect(runs.every((r) => r.outcome === "enqueued")).toBe(true);
    for (const run of runs) {
      expect(run.recordedAt.getTime() - run.occurrence.getTime()).toBeLessThan(1_000);
    }
    // About one read per occurrence (plus the first), not a poll loop.
    expect(reads).toBeLessThanOrEqual(runs.length + 3);
  });

  it("scheduler service › a tick that throws › logged and retried, never an unhandled rejection, later ticks still run", async () => {
    const { backend } = await everySecond();
    let failures = 2;
    const store: ScheduleStore = new Proxy<ScheduleStore>(backend, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop === "scheduleDue") {
          return (params: ScheduleDueParams) => {
            if (failures > 0) {
              failures -= 1;
              return Promise.reject(new Error("database went away"));
            }
            return target.scheduleDue(params);
          };
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const warnings: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => warnings.push(line) });
    const service = new SchedulerService({
      scheduler: new Scheduler({ store, logger }),
      logger,
    });
    await service.start();
    await waitFor(
      async () => (await backend.jobStats()).total >= 1,
      5_000,
      "an occurrence after the failures",
    );
    await service.stop();
    expect(warnings.filter((w) => w.includes("scheduler tick failed"))).toHaveLength(2);
  });

  it("scheduler service › stop during a tick's write › the write commits or rolls back, nothing enqueued after stop", async () => {
    const { backend } = await everySecond();
    let release: (() => void) | undefined;
    let writes = 0;
    let afterStop = 0;
    let stopped = false;
    const store: ScheduleStore = new Proxy<ScheduleStore>(backend, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop === "scheduleAdvance") {
          return async (params: ScheduleAdvanceParams) => {
            writes += 1;
            if (stopped) afterStop += 1;
            if (writes === 1) await new Promise<void>((r) => (release = r));
            return target.scheduleAdvance(params);
          };
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const service = new SchedulerService({
      scheduler: new Scheduler({ store, logger: silent }),
      logger: silent,
      stopBoundMs: 3_000,
    });
    await service.start();
    await waitFor(() => release !== undefined, 5_000, "a write in flight");
    const stopping = service.stop();
    setTimeout(() => release?.(), 100);
    await stopping;
    stopped = true;
    const total = (await backend.jobStats()).total;
    expect(total).toBe(1); // the write in flight committed whole
    await new Promise((r) => setTimeout(r, 1_500));
    expect(afterStop).toBe(0);
    expect((await backend.jobStats()).total).toBe(total);
    expect(service.state).toBe("idle");
  });

  it("scheduler service › start/stop stress › always ends idle within its bound", async () => {
    const { backend } = await everySecond();
    await stressStartStop(
      () =>
        new SchedulerService({
          scheduler: new Scheduler({ store: backend, logger: silent }),
          logger: silent,
        }),
    );
  });
});
