/** The Prometheus exporter and the health handler on the memory backend: bounded labels, leader-sampled queue gauges, probes. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { healthHandler, Soniq } from "../../src/index.js";
import { prometheusMetrics } from "../../src/observability/prometheus/index.js";
import { waitForEvent } from "../helpers/events.js";
import { memoryBackend } from "../helpers/test-backends.js";

async function instance(extra: Record<string, unknown> = {}) {
  return new Soniq({
    backend: await memoryBackend(),
    logger: pino({ level: "silent" }),
    env: {},
    pollInterval: 0.02,
    heartbeatInterval: 0.1,
    rejectUnknownJobs: false,
    ...extra,
  });
}

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function serve(handler: ReturnType<typeof healthHandler>): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("prometheus exporter", () => {
  it("prometheusMetrics › 50 distinct unregistered job names › one job label value, _unknown", async () => {
    const soniq = await instance();
    soniq.job({ name: "known.one", handler: async () => undefined });
    const metrics = prometheusMetrics(soniq);
    for (let i = 0; i < 50; i++) await soniq.enqueue(`other.name${i}`, {});
    await soniq.enqueue("known.one", {});
    const text = await metrics.scrape();
    const jobs = new Set(
      [...text.matchAll(/^soniq_jobs_enqueued_total\{[^}]*job="([^"]+)"/gm)].map((m) => m[1]),
    );
    expect(jobs).toEqual(new Set(["_unknown", "known.one"]));
    expect(text).toContain('soniq_jobs_enqueued_total{queue="default",job="_unknown"} 50');
  });

  it("prometheusMetrics › a handler returns ctx.rateLimited with scope queue › soniq_scopes_paused_total counts it by scope", async () => {
    const soniq = await instance();
    let calls = 0;
    soniq.job({
      name: "api.call",
      handler: async (_args: unknown, ctx) => {
        calls += 1;
        return calls === 1 ? ctx.rateLimited(10, { scope: "queue" }) : undefined;
      },
    });
    const metrics = prometheusMetrics(soniq);
    const paused = waitForEvent(soniq, "scope_paused");
    const done = waitForEvent(soniq, "job_done");
    await soniq.enqueue("api.call", {});
    const worker = soniq.worker();
    await worker.start();
    await paused;
    await done;
    await worker.stop();
    const text = await metrics.scrape();
    expect(text).toContain(
      'soniq_scopes_paused_total{queue="default",job="api.call",scope="queue"} 1',
    );
  });

  it("prometheusMetrics › only a job delayed an hour, sampled by the leader › age 0 and queued 1; stale after three intervals › series absent", async () => {
    const soniq = await instance({ metricsInterval: 1 });
    const later = soniq.job({ name: "q.later", handler: async () => undefined });
    let now = Date.now();
    const metrics = prometheusMetrics(soniq, { clock: () => now });
    await later.enqueue({}, { delay: 3600 });
    const sampled = waitForEvent(soniq, "queue_metrics", undefined, 5000);
    const worker = soniq.worker();
    await worker.start();
    await sampled;
    const text = await metrics.scrape();
    expect(text).toContain('soniq_queue_oldest_claimable_age_seconds{queue="default"} 0');
    expect(text).toContain('soniq_queue_jobs{queue="default",status="queued"} 1');
    await worker.stop();
    now += 3001;
    const stale = await metrics.scrape();
    expect(stale).not.toMatch(/^soniq_queue_jobs\{/m);
    expect(stale).not.toMatch(/^soniq_queue_oldest_claimable_age_seconds\{/m);
  });

  it("prometheusMetrics › a worker drained before this exporter existed (a stopped CLI process) › the next leader exports its exit from the database", async () => {
    const soniq = await instance({ metricsInterval: 1 });
    soniq.job({ name: "x.any", handler: async () => undefined });
    const first = soniq.worker();
    await first.start();
    expect(await first.stop()).toMatchObject({ reason: "drained", exitCode: 0 });
    // A later process: its own drain counter never saw the first worker stop.
    const metrics = prometheusMetrics(soniq);
    const sampled = waitForEvent(
      soniq,
      "queue_metrics",
      (e) => e.worker_exits.some((x) => x.exit_reason === "drained"),
      5000,
    );
    const before = Date.now();
    const second = soniq.worker();
    await second.start();
    const event = await sampled;
    expect(event.worker_exits).toEqual([
      { exit_reason: "drained", exits: 1, last_at: expect.any(String) },
    ]);
    const text = await metrics.scrape();
    expect(text).toContain('soniq_drains_total{exit_reason="drained"} 0');
    expect(text).toContain('soniq_worker_exits_total{exit_reason="drained"} 1');
    const stamp = text.match(
      /^soniq_worker_last_exit_timestamp_seconds\{exit_reason="drained"\} (\S+)$/m,
    );
    expect(Number(stamp?.[1])).toBeGreaterThan(before / 1000 - 60);
    expect(Number(stamp?.[1])).toBeLessThanOrEqual(Date.now() / 1000 + 1);
    await second.stop();
  });

  it("prometheusMetrics › no exporter listening › the leader issues no queue query until one subscribes", async () => {
    const backend = await memoryBackend();
    let reads = 0;
    const read = backend.jobQueueMetrics.bind(backend);
    backend.jobQueueMetrics = () => {
      reads += 1;
      return read();
    };
    const soniq = await instance({ backend, metricsInterval: 1 });
    const job = soniq.job({ name: "q.any", handler: async () => undefined });
    const id = await job.enqueue({});
    const worker = soniq.worker();
    const done = waitForEvent(soniq, "job_done", (e) => e.job_id === id, 5000);
    await worker.start();
    await done; // running and leading (the only worker), with nobody listening to queue_metrics
    expect(reads).toBe(0);
    const sampled = waitForEvent(soniq, "queue_metrics", undefined, 5000);
    prometheusMetrics(soniq);
    await sampled; // the sampler was running: it reads as soon as someone listens
    expect(reads).toBeGreaterThan(0);
    await worker.stop();
  });
});

describe("health handler", () => {
  it("healthHandler › RUNNING, database answers / fails / worker draining › 200 / 503 / 503; /livez 200; unknown path 404", async () => {
    const worker = { ready: true, state: "RUNNING" };
    let database: () => Promise<unknown> = async () => new Date();
    const base = await serve(
      healthHandler({ worker, checkDatabase: () => database(), databaseCacheMs: 0 }),
    );
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    database = async () => {
      throw new Error("connection refused");
    };
    const down = await fetch(`${base}/readyz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({
      status: "database unreachable",
      error: "connection refused",
    });
    worker.ready = false;
    worker.state = "DRAINING";
    database = () => new Promise(() => undefined); // never asked while draining
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
  });
});
