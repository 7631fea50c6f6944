/** A worker's parts wired on the memory backend, for the role files' unit tests. */
import { pino } from "pino";
import { Soniq } from "../../src/index.js";
import { EventBus } from "../../src/observability/event-bus.js";
import type { SoniqEventMap } from "../../src/observability/events.js";
import { InFlightTable } from "../../src/worker/in-flight.js";
import { buildRuntime, type WorkerSettings } from "../../src/worker/runtime.js";
import { ShutdownMachine } from "../../src/worker/shutdown-machine.js";
import { WakeLatch } from "../../src/worker/wake-latch.js";
import { memoryBackend } from "./test-backends.js";

export const silent = pino({ level: "silent" });

/** A registered worker row `w1`, its settings, machine, table, events and built runtime. */
export async function workerParts(
  define: (soniq: Soniq) => void,
  extra: Record<string, unknown> = {},
) {
  const backend = await memoryBackend();
  const soniq = new Soniq({
    backend,
    logger: silent,
    env: {},
    pollInterval: 0.02,
    heartbeatInterval: 0.05,
    shutdownTimeout: 0.3,
    shutdownSettle: 0.05,
    ...extra,
  });
  define(soniq);
  await backend.workerRegister({ id: "w1", hostname: "h", pid: 1, queues: null, concurrency: 2 });
  const settings: WorkerSettings = { ...soniq.settings, concurrency: 2, queues: null };
  const machine = new ShutdownMachine(settings.shutdownTimeout, Date.now, 0.2);
  const latch = new WakeLatch();
  const table = new InFlightTable(() => latch.wake());
  const events: Array<{ name: string; payload: Record<string, unknown> }> = [];
  const bus = new EventBus<SoniqEventMap>(silent);
  bus.onAny((name, payload) => void events.push({ name, payload: { ...payload } }));
  const runtime = buildRuntime({
    backend,
    workerId: "w1",
    settings,
    jobs: soniq.definitions,
    logger: silent,
    events: bus,
    machine,
    table,
    latch,
  });
  /** Claims what is due for `w1`. */
  const claim = (limit = 10) => backend.jobClaim({ workerId: "w1", queues: null, limit });
  return { backend, soniq, settings, machine, latch, table, events, bus, runtime, claim };
}
