/**
 * The health endpoints as one `node:http` request handler, for `soniq worker --health-port` and
 * for users who embed the worker in their own server: `GET /livez` (the process answers, so its
 * event loop turns), `GET /readyz` (the worker is RUNNING and the database answers; 503 from the
 * first stop signal on, without asking the database) and `GET /metrics` (the Prometheus
 * exposition, when an exporter is given). Anything else is 404.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { withTimeout } from "../../worker/with-timeout.js";

/** What the probes read of a worker (a `Worker` is one). */
export interface ProbedWorker {
  /** True while started and RUNNING; false from the first stop signal on. */
  readonly ready: boolean;
  /** The shutdown state, reported in the body. */
  readonly state: string;
}

/** Options of {@link healthHandler}. */
export interface HealthHandlerOptions {
  /** The worker whose readiness `/readyz` reports. */
  worker: ProbedWorker;
  /**
   * Resolves when the database answers (e.g. `() => soniq.backend().then((b) => b.now())`). Without
   * it `/readyz` reads only the worker's state.
   */
  checkDatabase?: () => Promise<unknown>;
  /** Milliseconds the database check may take before `/readyz` says 503. Default 1000. */
  databaseTimeoutMs?: number;
  /** Milliseconds a successful database check is reused for. Default 1000. */
  databaseCacheMs?: number;
  /** Serves `/metrics` (e.g. the result of `prometheusMetrics(soniq)`); absent → 404. */
  metrics?: { readonly contentType: string; scrape(): Promise<string> };
}

/** A `node:http` request listener. Never throws; every answer ends the response. */
export type HealthHandler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * The handler described in the module comment. Mount it on its own server or route `/livez`,
 * `/readyz` and `/metrics` to it from yours.
 */
export function healthHandler(options: HealthHandlerOptions): HealthHandler {
  const timeoutMs = options.databaseTimeoutMs ?? 1000;
  const cacheMs = options.databaseCacheMs ?? 1000;
  let okUntil = 0;
  let pending: Promise<string | undefined> | undefined;
  /** Undefined when the database answered; else why not. Concurrent probes share one check. */
  const database = (): Promise<string | undefined> => {
    const check = options.checkDatabase;
    if (!check || Date.now() < okUntil) return Promise.resolve(undefined);
    pending ??= withTimeout(check(), timeoutMs, "database check")
      .then(
        () => {
          okUntil = Date.now() + cacheMs;
          return undefined;
        },
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      )
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };
  const send = (response: ServerResponse, status: number, body: Record<string, unknown>) => {
    response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    response.end(`${JSON.stringify(body)}\n`);
  };
  return (request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    const { worker } = options;
    if (request.method !== "GET" && request.method !== "HEAD") {
      send(response, 405, { error: "method not allowed" });
    } else if (path === "/livez" || path === "/healthz") {
      send(response, 200, { status: "ok", state: worker.state });
    } else if (path === "/readyz") {
      if (!worker.ready) {
        send(response, 503, { status: "not ready", state: worker.state });
        return;
      }
      void database().then((problem) => {
        // The state may have changed while the database answered: read it again.
        if (!worker.ready) send(response, 503, { status: "not ready", state: worker.state });
        else if (problem !== undefined) {
          send(response, 503, {
            status: "database unreachable",
            state: worker.state,
            error: problem,
          });
        } else send(response, 200, { status: "ready", state: worker.state });
      });
    } else if (path === "/metrics" && options.metrics) {
      const { metrics } = options;
      metrics.scrape().then(
        (text) => {
          response.writeHead(200, { "content-type": metrics.contentType });
          response.end(text);
        },
        (err: unknown) => send(response, 500, { error: String(err) }),
      );
    } else {
      send(response, 404, { error: "not found" });
    }
  };
}
