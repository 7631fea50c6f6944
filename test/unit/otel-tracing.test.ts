/** OpenTelemetry tracing with an in-memory span exporter: producer span at enqueue, consumer span per attempt (child for attempt 1, linked for the retry). */
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import {
  formatTraceContext,
  otelTracing,
  parseTraceContext,
} from "../../src/observability/otel/index.js";
import { waitForEvent } from "../helpers/events.js";
import { memoryBackend } from "../helpers/test-backends.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const manager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(manager.enable());
});
afterAll(() => {
  manager.disable();
  context.disable();
});

async function instance(propagation?: "off") {
  return new Soniq({
    backend: await memoryBackend(),
    logger: pino({ level: "silent" }),
    env: {},
    pollInterval: 0.02,
    heartbeatInterval: 0.1,
    tracing: otelTracing({ tracerProvider: provider, ...(propagation ? { propagation } : {}) }),
  });
}

const kind = (span: ReadableSpan) => span.kind;
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe("otel tracing", () => {
  it("otelTracing › enqueue inside an active span, attempt 1 fails, the retry succeeds › producer is the request's child; attempt 1 its child; the retry a new trace linked to it", async () => {
    exporter.reset();
    const soniq = await instance();
    let runs = 0;
    const flaky = soniq.job({
      name: "otel.flaky",
      retry: { kind: "fixed", delay: 0.05 },
      handler: async () => {
        runs += 1;
        if (runs === 1) throw new Error("first attempt fails");
        return "ok";
      },
    });
    const request = provider.getTracer("test");
    const id = await request.startActiveSpan("POST /orders", async (span) => {
      const jobId = await flaky.enqueue({});
      span.end();
      return jobId;
    });
    expect((await soniq.getJob(id)) !== null).toBe(true);
    const done = waitForEvent(soniq, "job_done", (e) => e.job_id === id, 10_000);
    const worker = soniq.worker();
    await worker.start();
    await done;
    await worker.stop();

    const spans = exporter.getFinishedSpans();
    const root = spans.find((s) => s.name === "POST /orders");
    const producer = spans.find((s) => s.name === "send default");
    const consumers = spans
      .filter((s) => s.name === "process default")
      .sort(
        (a, b) =>
          Number(a.attributes["soniq.job.attempt"]) - Number(b.attributes["soniq.job.attempt"]),
      );
    expect(root && producer).toBeTruthy();
    if (!root || !producer) return;
    expect(kind(producer)).toBe(SpanKind.PRODUCER);
    expect(producer.spanContext().traceId).toBe(root.spanContext().traceId);
    expect(parentOf(producer)).toBe(root.spanContext().spanId);
    expect(producer.attributes).toMatchObject({
      "messaging.system": "soniq",
      "messaging.destination.name": "default",
      "messaging.message.id": id,
      "soniq.job.name": "otel.flaky",
    });

    expect(consumers).toHaveLength(2);
    const [first, retry] = consumers as [ReadableSpan, ReadableSpan];
    expect(kind(first)).toBe(SpanKind.CONSUMER);
    expect(first.spanContext().traceId).toBe(producer.spanContext().traceId);
    expect(parentOf(first)).toBe(producer.spanContext().spanId);
    expect(first.links).toEqual([]);
    expect(first.attributes).toMatchObject({
      "messaging.operation.type": "process",
      "messaging.message.id": id,
      "soniq.job.attempt": 1,
      "soniq.outcome": "retried",
    });
    expect(first.status.code).toBe(SpanStatusCode.ERROR);

    expect(retry.attributes).toMatchObject({ "soniq.job.attempt": 2, "soniq.outcome": "done" });
    expect(parentOf(retry)).toBeUndefined();
    expect(retry.spanContext().traceId).not.toBe(producer.spanContext().traceId);
    expect(retry.links).toHaveLength(1);
    expect(retry.links[0]?.context.spanId).toBe(producer.spanContext().spanId);
    expect(retry.links[0]?.context.traceId).toBe(producer.spanContext().traceId);
  });

  it("otelTracing › a job that outlives shutdownTimeout › its span has the shutdown and NACK events and ends nacked", async () => {
    exporter.reset();
    const soniq = new Soniq({
      backend: await memoryBackend(),
      logger: pino({ level: "silent" }),
      env: {},
      pollInterval: 0.02,
      shutdownTimeout: 0.2,
      shutdownSettle: 0.05,
      tracing: otelTracing({ tracerProvider: provider }),
    });
    const stuck = soniq.job({
      name: "otel.stuck",
      handler: () => new Promise<never>(() => undefined),
    });
    const id = await stuck.enqueue({});
    const started = waitForEvent(soniq, "job_started", (e) => e.job_id === id, 5000);
    const worker = soniq.worker();
    await worker.start();
    await started;
    expect((await worker.stop("SIGTERM")).exitCode).toBe(1);
    const span = exporter.getFinishedSpans().find((s) => s.name === "process default");
    expect(span?.events.map((e) => e.name)).toEqual([
      "soniq.shutdown",
      "soniq.force_timeout_path",
      "soniq.nack",
    ]);
    expect(span?.attributes["soniq.outcome"]).toBe("nacked");
  });

  it("otelTracing › propagation off › nothing stored with the job", async () => {
    const soniq = await instance("off");
    soniq.job({ name: "otel.plain", handler: async () => undefined });
    const started = waitForEvent(soniq, "job_started", undefined, 5000);
    await trace.getTracer("x").startActiveSpan("outer", async (span) => {
      await soniq.enqueue("otel.plain", {});
      span.end();
    });
    const worker = soniq.worker();
    await worker.start();
    expect((await started).trace_context).toBeNull();
    await worker.stop();
  });

  it("trace context text › round trip › traceparent and tracestate kept; garbage is ignored", () => {
    const span = provider.getTracer("t").startSpan("s");
    const text = formatTraceContext(span.spanContext());
    expect(text).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(parseTraceContext(text)).toMatchObject({
      traceId: span.spanContext().traceId,
      spanId: span.spanContext().spanId,
      isRemote: true,
    });
    expect(parseTraceContext(`${text} k=v`)?.traceState?.get("k")).toBe("v");
    expect(parseTraceContext("nonsense")).toBeUndefined();
    span.end();
  });
});
