/**
 * Remote metrics (docs/metrics.md): the Prometheus exporter's remote counters, fed by the typed
 * events (`remote_phase`, `remote_handoff`, `remote_submit`, `remote_poll`, `remote_reconcile`,
 * the last three with their call's duration), scraped after a
 * real worker ran remote jobs against the local test provider on the memory backend: a plain job
 * (one submission, a pending poll, a done poll), a POST whose answer is dropped (frozen, then
 * reconciled to accepted) and a POST still unanswered at the shutdown deadline (frozen, handed off
 * with action freeze, reason deadline).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { prometheusMetrics } from "../../src/observability/prometheus/index.js";
import { type RemoteProvider, startRemoteProvider } from "../helpers/remote-provider.js";
import { memoryBackend } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";
import { remoteInstance } from "./harness.js";

let provider: RemoteProvider;
beforeAll(async () => {
  provider = await startRemoteProvider();
});
afterAll(async () => {
  await provider.close();
});

/** The `_count` of the remote-call histogram for one call and outcome (0 when absent). */
function calls(text: string, call: string, outcome: string): number {
  const line = text
    .split("\n")
    .find(
      (l) =>
        l.startsWith("soniq_remote_call_duration_seconds_count{") &&
        l.includes(`call="${call}"`) &&
        l.includes(`outcome="${outcome}"`),
    );
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

/** The value of one sample of the exposition `text` (0 when absent). */
function value(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

it("prometheusMetrics › remote jobs submitted, polled, frozen, reconciled, frozen at the deadline › each counter counts exactly those", async () => {
  const { soniq, job } = remoteInstance(await memoryBackend(), provider, {
    reconcile: true,
    settings: { shutdownTimeout: 0.3, shutdownSettle: 0.1 },
  });
  const metrics = prometheusMetrics(soniq);
  const worker = soniq.worker({ concurrency: 4 });
  await worker.start();
  const done = (id: string) =>
    waitFor(async () => (await soniq.getJob(id))?.status === "done", 10_000, `job ${id} done`);
  const plain = await job.enqueue({ behaviour: { polls: 1 } });
  const dropped = await job.enqueue({ behaviour: { polls: 0, drop: true } });
  await done(plain);
  await done(dropped);
  const slow = await job.enqueue({ behaviour: { delayMs: 5000 } });
  await waitFor(() => provider.postsByKey.get(`${slow}:1`) === 1, 10_000, "slow POST sent");
  await worker.stop();

  const text = await metrics.scrape();
  const name = 'job="music.generate"';
  expect(value(text, `soniq_remote_submissions_total{${name}}`)).toBe(3);
  // plain by its submit's answer, dropped by its reconcile; slow never reached the remote side.
  expect(value(text, `soniq_remote_accepted_total{${name}}`)).toBe(2);
  expect(value(text, `soniq_remote_frozen_total{${name}}`)).toBe(2); // dropped + slow
  expect(value(text, `soniq_remote_reconciles_total{${name},outcome="accepted"}`)).toBe(1);
  expect(value(text, `soniq_remote_polls_total{${name},outcome="pending"}`)).toBe(1);
  expect(value(text, `soniq_remote_polls_total{${name},outcome="done"}`)).toBe(2);
  expect(
    value(text, `soniq_remote_handoffs_total{${name},action="freeze",reason="deadline"}`),
  ).toBe(1);
  expect(text).toMatch(/^# TYPE soniq_remote_polls_total counter$/m);
  // Every submit, poll and reconcile call timed, by outcome (`remote_submit`, `remote_poll`,
  // `remote_reconcile` carry duration_ms).
  expect(calls(text, "submit", "accepted")).toBe(1); // plain
  expect(calls(text, "submit", "error") + calls(text, "submit", "timeout")).toBe(1); // dropped
  expect(calls(text, "submit", "deadline")).toBe(1); // slow
  expect(calls(text, "poll", "pending")).toBe(1);
  expect(calls(text, "poll", "done")).toBe(2);
  expect(calls(text, "reconcile", "accepted")).toBe(1);
  expect(text).toMatch(/^# TYPE soniq_remote_call_duration_seconds histogram$/m);
  metrics.close();
  await soniq.close();
}, 30_000);
