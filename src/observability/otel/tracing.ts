/**
 * OpenTelemetry tracing for Soniq, on `@opentelemetry/api` only (an optional peer dependency; no
 * SDK is bundled: without one registered, every span is a no-op). Follows the messaging semantic
 * conventions: a PRODUCER span `send <queue>` around each enqueue write, whose context is stored
 * with the job (`traceContext`: W3C traceparent and tracestate), and a CONSUMER span
 * `process <queue>` per attempt, fed from the event bus — the child of the producer span for
 * attempt 1, a new root with a link to it for retries (a retry's parent finished long ago, and
 * fan-out would make one trace explode). NACK, FORCE_TIMEOUT_PATH, the drain's start and a fenced
 * write are span events. A tracer that throws never fails an enqueue or a job.
 */
import {
  type Attributes,
  context,
  createTraceState,
  isSpanContextValid,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import type { NewJob } from "../../backends/contract/index.js";
import type { EventSubscriber, Unsubscribe } from "../event-bus.js";
import type { SoniqEventMap } from "../events.js";
import type { Logger } from "../logger.js";
import type { Tracing } from "../tracing.js";

/** How a consumer span relates to its producer span. */
export type Propagation = "parent-first-attempt" | "link" | "off";

/** Options of {@link otelTracing}. */
export interface OtelTracingOptions {
  /** Where tracers come from. Default: the global provider (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
  /**
   * `"parent-first-attempt"` (default): attempt 1 is the producer span's child, later attempts a
   * new trace linked to it. `"link"`: always a new trace with a link. `"off"`: no context is
   * stored with jobs (producer and consumer spans are still made, unrelated).
   */
  propagation?: Propagation;
}

const SYSTEM = "soniq";

/** The stored form of a span context: `traceparent`, then a space and `tracestate` if any. */
export function formatTraceContext(span: SpanContext): string {
  const parent = `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
  const state = span.traceState?.serialize();
  return state ? `${parent} ${state}` : parent;
}

/** The span context a stored trace context names, or undefined when it is not one. */
export function parseTraceContext(text: string | null | undefined): SpanContext | undefined {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?: (.+))?$/.exec(text ?? "");
  if (!match) return undefined;
  const span: SpanContext = {
    traceId: match[1] as string,
    spanId: match[2] as string,
    traceFlags: Number.parseInt(match[3] as string, 16),
    isRemote: true,
    ...(match[4] ? { traceState: createTraceState(match[4]) } : {}),
  };
  return isSpanContextValid(span) ? span : undefined;
}

/**
 * The tracer to give `new Soniq({ tracing: otelTracing() })`.
 *
 * ```ts
 * import { otelTracing } from "soniq/otel";
 * export const soniq = new Soniq({ tracing: otelTracing() });
 * ```
 */
export function otelTracing(options: OtelTracingOptions = {}): Tracing {
  const propagation = options.propagation ?? "parent-first-attempt";
  let cached: Tracer | undefined;
  const tracer = () => {
    cached ??= (options.tracerProvider ?? trace.getTracerProvider()).getTracer("soniq");
    return cached;
  };
  return {
    async traceEnqueue(jobs, insert) {
      let span: Span | undefined;
      let traced: readonly NewJob[] = jobs;
      try {
        const queues = [...new Set(jobs.map((j) => j.queue))];
        const attributes: Attributes = {
          "messaging.system": SYSTEM,
          "messaging.operation.type": "send",
          "messaging.operation.name": "send",
        };
        if (queues.length === 1) attributes["messaging.destination.name"] = queues[0];
        if (jobs.length === 1) {
          attributes["messaging.message.id"] = jobs[0]?.id;
          attributes["soniq.job.name"] = jobs[0]?.name;
        } else attributes["messaging.batch.message_count"] = jobs.length;
        span = tracer().startSpan(
          queues.length === 1 ? `send ${queues[0]}` : "send",
          { kind: SpanKind.PRODUCER, attributes },
          context.active(),
        );
        if (propagation !== "off" && span.isRecording()) {
          const stored = formatTraceContext(span.spanContext());
          traced = jobs.map((job) => ({ ...job, traceContext: stored }));
        }
      } catch {
        // A tracer that throws must not fail the enqueue.
      }
      try {
        return await insert(traced);
      } catch (err) {
        safely(() => {
          span?.recordException(err instanceof Error ? err : String(err));
          span?.setStatus({ code: SpanStatusCode.ERROR });
        });
        throw err;
      } finally {
        safely(() => span?.end());
      }
    },
    attach(events, logger) {
      return attachConsumer(events, logger, tracer, propagation);
    },
  };
}

function safely(call: () => void): void {
  try {
    call();
  } catch {
    // Tracing never fails a job.
  }
}

/** Consumer spans from the bus: one per attempt, keyed by job id. */
function attachConsumer(
  events: EventSubscriber<SoniqEventMap>,
  _logger: Logger,
  tracer: () => Tracer,
  propagation: Propagation,
): Unsubscribe {
  const open = new Map<string, { span: Span; workerId: string }>();
  const end = (
    jobId: string,
    outcome: string,
    failed = false,
    event?: { name: string; attributes: Attributes },
  ) => {
    const entry = open.get(jobId);
    if (!entry) return;
    open.delete(jobId);
    const { span } = entry;
    if (event) span.addEvent(event.name, event.attributes);
    span.setAttribute("soniq.outcome", outcome);
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
    span.end();
  };
  const forWorker = (workerId: string, call: (span: Span, jobId: string) => void) => {
    for (const [jobId, entry] of open) if (entry.workerId === workerId) call(entry.span, jobId);
  };
  const offs: Unsubscribe[] = [];
  const on = <K extends keyof SoniqEventMap>(
    name: K,
    listener: (e: Readonly<SoniqEventMap[K]>) => void,
  ) => offs.push(events.on(name, (e) => safely(() => listener(e))));

  on("job_started", (e) => {
    const producer = propagation === "off" ? undefined : parseTraceContext(e.trace_context);
    const child =
      producer !== undefined && propagation === "parent-first-attempt" && e.attempt === 1;
    const links: Link[] = producer !== undefined && !child ? [{ context: producer }] : [];
    const parent = child ? trace.setSpanContext(ROOT_CONTEXT, producer) : ROOT_CONTEXT;
    const span = tracer().startSpan(
      `process ${e.queue}`,
      {
        kind: SpanKind.CONSUMER,
        root: !child,
        links,
        attributes: {
          "messaging.system": SYSTEM,
          "messaging.operation.type": "process",
          "messaging.operation.name": "process",
          "messaging.destination.name": e.queue,
          "messaging.message.id": e.job_id,
          "soniq.job.name": e.job_name,
          "soniq.job.attempt": e.attempt,
          "soniq.job.wait_ms": e.wait_ms,
          "soniq.worker.id": e.worker_id,
        },
      },
      parent,
    );
    open.get(e.job_id)?.span.end(); // a previous attempt's span left open by a lost write
    open.set(e.job_id, { span, workerId: e.worker_id });
  });
  on("job_done", (e) => end(e.job_id, "done"));
  on("job_failed", (e) => end(e.job_id, "retried", true));
  on("job_snoozed", (e) => end(e.job_id, "snoozed"));
  on("job_frozen", (e) => end(e.job_id, "frozen", true));
  on("job_dead_lettered", (e) =>
    end(e.job_id, "dead_lettered", true, {
      name: "soniq.dead_lettered",
      attributes: { "soniq.reason": e.reason },
    }),
  );
  on("job_fenced_out", (e) =>
    end(e.job_id, "fenced_out", false, {
      name: "soniq.fenced_out",
      attributes: { "soniq.op": e.op },
    }),
  );
  on("shutdown_nack", (e) =>
    end(e.job_id, "nacked", false, {
      name: "soniq.nack",
      attributes: { "soniq.reason": e.reason },
    }),
  );
  on("drain_started", (e) =>
    forWorker(e.worker_id, (span) =>
      span.addEvent("soniq.shutdown", {
        "soniq.signal": e.signal,
        "soniq.deadline_at": e.deadline_at,
      }),
    ),
  );
  on("force_timeout_path", (e) =>
    forWorker(e.worker_id, (span, jobId) =>
      span.addEvent("soniq.force_timeout_path", {
        "soniq.released": e.releasing.includes(jobId),
      }),
    ),
  );
  on("worker_stopped", (e) =>
    forWorker(e.worker_id, (_span, jobId) => end(jobId, "unrecorded", true)),
  );
  return () => {
    for (const off of offs.splice(0)) off();
  };
}
