-- The producer's trace context (W3C traceparent, then a space and tracestate when there is one),
-- stored at enqueue by a tracer (soniq/otel) so each attempt's span can be linked to the enqueue.
-- NULL when tracing is off. Not copied to the dead-letter queue.
ALTER TABLE soniq_jobs ADD COLUMN trace_context TEXT;
