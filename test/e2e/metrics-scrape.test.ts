/**
 * `soniq worker --health-port` in a real process: /metrics scraped while jobs run (names, types
 * and label sets are an API: docs/metrics.md), then SIGTERM with a job that outlives
 * shutdownTimeout: /readyz is 503 at once, and the NACK and drain counters rise by exactly one.
 * A CLI worker that stops without a linger is never scraped: the next worker exports its exit
 * from the database (issue 26 item 6).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { prepared, startWorker, targets } from "../helpers/e2e-targets.js";
import { waitFor } from "../helpers/wait.js";

/** Every Soniq metric the exporter registers: name → type (docs/metrics.md lists the same). */
const SONIQ_METRICS: Record<string, string> = {
  soniq_jobs_enqueued_total: "counter",
  soniq_jobs_started_total: "counter",
  soniq_jobs_finished_total: "counter",
  soniq_jobs_failed_total: "counter",
  soniq_jobs_dead_lettered_total: "counter",
  soniq_job_duration_seconds: "histogram",
  soniq_job_wait_seconds: "histogram",
  soniq_jobs_in_flight: "gauge",
  soniq_worker_state: "gauge",
  soniq_shutdown_nacks_total: "counter",
  soniq_drains_total: "counter",
  soniq_drain_duration_seconds: "histogram",
  soniq_fenced_writes_total: "counter",
  soniq_jobs_recovered_total: "counter",
  soniq_jobs_crash_looped_total: "counter",
  soniq_queue_jobs: "gauge",
  soniq_queue_oldest_claimable_age_seconds: "gauge",
  soniq_queue_held_jobs: "gauge",
  soniq_jobs_waiting_for_worker: "gauge",
  soniq_jobs_waiting_for_worker_oldest_age_seconds: "gauge",
  soniq_worker_exits_total: "counter",
  soniq_worker_last_exit_timestamp_seconds: "gauge",
  soniq_remote_submissions_total: "counter",
  soniq_remote_accepted_total: "counter",
  soniq_remote_handoffs_total: "counter",
  soniq_remote_frozen_total: "counter",
  soniq_remote_reconciles_total: "counter",
  soniq_remote_polls_total: "counter",
  soniq_remote_call_duration_seconds: "histogram",
  soniq_scopes_paused_total: "counter",
  soniq_steps_frozen_total: "counter",
  soniq_flows_finished_total: "counter",
  soniq_batches_finished_total: "counter",
};

type Sample = { name: string; labels: Record<string, string>; value: number };

/** The samples of a Prometheus text exposition. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] as string] = pair[2] as string;
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** Sum of the samples of `name` whose labels include `where`. */
function sum(samples: Sample[], name: string, where: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((total, s) => total + s.value, 0);
}

for (const target of targets) {
  describe.skipIf(target.skip)(`metrics and probes, real process, ${target.label}`, () => {
    it("soniq worker --health-port › jobs run, then SIGTERM with a job outliving shutdownTimeout › /readyz 503 at once; NACK and drain counters +1 each", async () => {
      const { env, db } = await prepared(target, {
        SONIQ_SHUTDOWN_TIMEOUT: "1.5",
        SONIQ_SHUTDOWN_SETTLE: "0.2",
        SONIQ_METRICS_INTERVAL: "1",
        SONIQ_HEARTBEAT_INTERVAL: "0.3",
      });
      const w = startWorker(env, [
        "--health-port",
        "0",
        "--health-host",
        "127.0.0.1",
        "--health-linger",
        "30",
      ]);
      await w.ready;
      await waitFor(() => /"port":\d+/.test(w.stderr()), 10_000, "health server listening");
      const port = Number(/"port":(\d+)/.exec(w.stderr())?.[1]);
      const base = `http://127.0.0.1:${port}`;
      const scrape = async () => parse(await (await fetch(`${base}/metrics`)).text());

      const noops = await Promise.all([1, 2, 3].map(() => db.enqueue("e2e.noop", {})));
      const stubborn = await db.enqueue("e2e.stubborn", { ms: 20_000 });
      let running: Sample[] = [];
      await waitFor(
        async () => {
          running = await scrape();
          return (
            sum(running, "soniq_jobs_finished_total", { job: "e2e.noop", outcome: "done" }) === 3 &&
            sum(running, "soniq_jobs_in_flight") === 1 &&
            sum(running, "soniq_queue_jobs", { queue: "default", status: "processing" }) === 1
          );
        },
        15_000,
        "three jobs done, one in flight, queue gauges sampled",
      );

      // Names and types are an API; labels never carry ids or arguments.
      const text = await (await fetch(`${base}/metrics`)).text();
      const types = Object.fromEntries(
        [...text.matchAll(/^# TYPE (soniq_\w+) (\w+)$/gm)].map((m) => [m[1], m[2]]),
      );
      expect(types).toEqual(SONIQ_METRICS);
      const docs = readFileSync(new URL("../../docs/metrics.md", import.meta.url), "utf8");
      for (const name of Object.keys(SONIQ_METRICS)) expect(docs).toContain(`\`${name}\``);
      for (const id of [...noops, stubborn]) expect(text).not.toContain(id);
      expect(sum(running, "soniq_worker_state", { state: "running" })).toBe(1);
      expect(sum(running, "soniq_job_wait_seconds_count", { job: "e2e.noop" })).toBe(3);
      expect(sum(running, "soniq_queue_oldest_claimable_age_seconds", { queue: "default" })).toBe(
        0,
      );
      expect((await fetch(`${base}/livez`)).status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);

      const nacksBefore = sum(running, "soniq_shutdown_nacks_total");
      const drainsBefore = sum(running, "soniq_drains_total");
      const timeoutDrainsBefore = sum(running, "soniq_drains_total", {
        exit_reason: "shutdown_timeout",
      });
      expect(nacksBefore).toBe(0);

      const signalled = Date.now();
      w.child.kill("SIGTERM");
      let ready = await fetch(`${base}/readyz`);
      // The signal and the probe race on the event loop; the 503 must come long before the deadline.
      while (ready.status === 200 && Date.now() - signalled < 300) {
        ready = await fetch(`${base}/readyz`);
      }
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ state: "DRAINING" });
      expect(Date.now() - signalled).toBeLessThan(1500);
      const draining = await scrape();
      expect(sum(draining, "soniq_worker_state", { state: "draining" })).toBe(1);
      expect(sum(draining, "soniq_shutdown_nacks_total")).toBe(0);

      await waitFor(() => w.stderr().includes("health endpoints linger"), 15_000, "worker stopped");
      const after = await scrape();
      expect(sum(after, "soniq_shutdown_nacks_total")).toBe(nacksBefore + 1);
      expect(
        sum(after, "soniq_shutdown_nacks_total", { queue: "default", job: "e2e.stubborn" }),
      ).toBe(1);
      expect(sum(after, "soniq_drains_total")).toBe(drainsBefore + 1);
      expect(sum(after, "soniq_drains_total", { exit_reason: "shutdown_timeout" })).toBe(
        timeoutDrainsBefore + 1,
      );
      expect(sum(after, "soniq_drain_duration_seconds_count")).toBe(1);
      expect(sum(after, "soniq_worker_state", { state: "stopped" })).toBe(1);
      expect(sum(after, "soniq_jobs_in_flight")).toBe(0);
      expect((await fetch(`${base}/readyz`)).status).toBe(503);

      w.child.kill("SIGTERM"); // ends the linger
      const exit = await w.exited;
      expect(exit.code, exit.stderr).toBe(1);
      expect(await db.getJob(stubborn)).toMatchObject({ status: "queued", attempts: 0 });
      await db.close();
    });

    it("soniq worker, no linger › the deadline path, then the next worker's /metrics › soniq_worker_exits_total and the last-exit time show it; the alert expression holds", async () => {
      const { env, db } = await prepared(target, {
        SONIQ_SHUTDOWN_TIMEOUT: "0.5",
        SONIQ_SHUTDOWN_SETTLE: "0.2",
        SONIQ_METRICS_INTERVAL: "1",
        SONIQ_HEARTBEAT_INTERVAL: "0.3",
      });
      const first = startWorker(env);
      await first.ready;
      const stubborn = await db.enqueue("e2e.stubborn", { ms: 20_000 });
      await waitFor(
        async () => (await db.getJob(stubborn))?.status === "processing",
        15_000,
        "claimed",
      );
      const stoppedAfter = Date.now() / 1000;
      first.child.kill("SIGTERM");
      expect((await first.exited).code).toBe(1); // the deadline path, no scrape ever saw it

      // Claims from another queue: the NACK'd job stays queued, this worker drains at once.
      const next = startWorker(env, [
        "-q",
        "elsewhere",
        "--health-port",
        "0",
        "--health-host",
        "127.0.0.1",
      ]);
      await next.ready;
      await waitFor(() => /"port":\d+/.test(next.stderr()), 10_000, "health server listening");
      const port = Number(/"port":(\d+)/.exec(next.stderr())?.[1]);
      let samples: Sample[] = [];
      await waitFor(
        async () => {
          samples = parse(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
          return sum(samples, "soniq_worker_exits_total") > 0;
        },
        15_000,
        "the leader's sample",
      );
      expect(sum(samples, "soniq_worker_exits_total", { exit_reason: "shutdown_timeout" })).toBe(1);
      expect(sum(samples, "soniq_worker_exits_total")).toBe(1);
      expect(sum(samples, "soniq_drains_total")).toBe(0); // this process's own: nothing drained
      const last = sum(samples, "soniq_worker_last_exit_timestamp_seconds", {
        exit_reason: "shutdown_timeout",
      });
      // docs/metrics.md's alert: time() - last < 3600 (database clock; generous skew).
      expect(last).toBeGreaterThan(stoppedAfter - 60);
      expect(Date.now() / 1000 - last).toBeLessThan(3600);
      next.child.kill("SIGTERM");
      expect((await next.exited).code).toBe(0);
      await db.close();
    });
  });
}
