/**
 * A remote job whose `preflight` throws is dead-lettered `preflight_failed` with nothing submitted
 * (docs/remote-jobs.md, "The handler"), and that move is reported like every other one: a
 * `job_dead_lettered` event (docs/events.md) and `soniq_jobs_dead_lettered_total{reason}` plus
 * `soniq_jobs_finished_total{outcome="dead_lettered"}` (docs/metrics.md). Memory backend: the
 * event and the exporter are the same code on every store.
 */
import { pino } from "pino";
import { expect, it } from "vitest";
import { accepted, done, Soniq } from "../../src/index.js";
import type { JobDeadLetteredEvent } from "../../src/observability/events.js";
import { prometheusMetrics } from "../../src/observability/prometheus/index.js";
import { waitForEvent } from "../helpers/events.js";
import { memoryBackend } from "../helpers/test-backends.js";

/** The value of one sample of the exposition `text` (0 when absent). */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

it("remote job › preflight throws › dead-lettered preflight_failed with a job_dead_lettered event and its metrics, nothing submitted", async () => {
  const soniq = new Soniq({
    backend: await memoryBackend(),
    env: {},
    logger: pino({ level: "silent" }),
    pollInterval: 0.05,
    heartbeatInterval: 0.2,
    shutdownSettle: 0.1,
  });
  let submits = 0;
  const job = soniq.remoteJob({
    name: "render.video",
    queue: "render",
    submitTimeout: 5,
    pollEvery: 0.05,
    pollTimeout: 60,
    preflight: () => {
      throw new Error("quota exhausted");
    },
    submit: () => {
      submits += 1;
      return accepted("never");
    },
    poll: () => done(null),
  });
  const metrics = prometheusMetrics(soniq);
  const worker = soniq.worker({ concurrency: 1 });
  const events: JobDeadLetteredEvent[] = [];
  soniq.events.on("job_dead_lettered", (e) => {
    events.push({ ...e });
  });
  const id = await job.enqueue({});
  const moved = waitForEvent(soniq, "job_dead_lettered", (e) => e.job_id === id);
  await worker.start();
  await moved;
  await worker.stop();

  expect(events).toEqual([
    {
      worker_id: worker.id,
      job_id: id,
      job_name: "render.video",
      queue: "render",
      reason: "preflight_failed",
    },
  ]);
  expect(submits).toBe(0);
  const row = await soniq.deadLetters.get(id);
  expect(row?.reason).toBe("preflight_failed");
  expect(row?.lastError).toContain("quota exhausted");

  const text = await metrics.scrape();
  const labels = 'queue="render",job="render.video"';
  expect(sample(text, `soniq_jobs_dead_lettered_total{${labels},reason="preflight_failed"}`)).toBe(
    1,
  );
  expect(sample(text, `soniq_jobs_finished_total{${labels},outcome="dead_lettered"}`)).toBe(1);
  metrics.close();
  await soniq.close();
}, 20_000);
