/** Unit tests of the metrics sink as a subscriber of the event bus (src/observability/metrics.ts). */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { MetricsSink } from "../../src/index.js";
import { EventBus } from "../../src/observability/event-bus.js";
import type { SoniqEventMap } from "../../src/observability/events.js";
import { subscribeMetricsSink } from "../../src/observability/metrics.js";

function setup(sink: MetricsSink) {
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: "warn" },
    { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const bus = new EventBus<SoniqEventMap>(logger);
  const off = subscribeMetricsSink(bus, sink, logger);
  return { bus, logs, off };
}

const started = {
  worker_id: "w1",
  concurrency: 2,
  queues: null,
  backend: "memory",
} as const;

describe("metrics sink subscriber", () => {
  it("a worker's life › start, a job, stop › start(), emit(name, payload) per event, then end()", () => {
    const calls: string[] = [];
    const payloads: Array<Record<string, unknown>> = [];
    const { bus } = setup({
      start: () => void calls.push("start"),
      end: () => void calls.push("end"),
      emit: (name, payload) => {
        calls.push(name);
        payloads.push(payload);
      },
    });
    bus.emit("worker_started", started);
    bus.emit("job_done", {
      worker_id: "w1",
      job_id: "j1",
      job_name: "n",
      queue: "default",
      duration_ms: 5,
    });
    bus.emit("worker_stopped", { worker_id: "w1", exit_reason: "drained", exit_code: 0 });
    expect(calls).toEqual(["start", "job_done", "worker_stopped", "end"]);
    expect(payloads[0]).toEqual({
      worker_id: "w1",
      job_id: "j1",
      job_name: "n",
      queue: "default",
      duration_ms: 5,
    });
  });

  it("a sink that throws or rejects › any call › logged with metrics_call and ignored; the emitter goes on", async () => {
    const { bus, logs } = setup({
      start: () => {
        throw new Error("start broke");
      },
      end: async () => {
        throw new Error("end broke");
      },
      emit: () => {
        throw new Error("emit broke");
      },
    });
    expect(() => {
      bus.emit("worker_started", started);
      bus.emit("job_failed", { worker_id: "w1", job_id: "j1", job_name: "n", queue: "default" });
      bus.emit("worker_stopped", { worker_id: "w1", exit_reason: "drained", exit_code: 0 });
    }).not.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
    expect(logs.map((l) => [l.metrics_call, l.msg])).toEqual([
      ["start", "metrics sink failed; ignored"],
      ["job_failed", "metrics sink failed; ignored"],
      ["worker_stopped", "metrics sink failed; ignored"],
      ["end", "metrics sink failed; ignored"],
    ]);
  });

  it("unsubscribed › later events › the sink gets nothing", () => {
    const calls: string[] = [];
    const { bus, off } = setup({ emit: (name) => void calls.push(name) });
    off();
    bus.emit("job_done", { worker_id: "w1", job_id: "j1", job_name: "n", queue: "default" });
    expect(calls).toEqual([]);
    expect(bus.hasListeners("job_done")).toBe(false);
  });
});
