// The gauge soniq_queue_held_jobs{queue,limit} (issue 28 item 6; docs/metrics.md,
// docs/flow-control.md "Seeing what a limit holds back") on a SQLite file and PostgreSQL: with a
// real worker running key `a` at its concurrency limit of 1 (2 more due) and key `r` behind its
// rate limit of one start a minute (2 more due), the leader's scrape shows 2 held by concurrency
// and 2 held by rate in queue `tenants`; once `a`'s jobs may finish, the concurrency series goes
// to 0 while the rate series stays 2 (the window has not turned); a queue without keyed jobs
// shows 0 for both.
import { pino } from "pino";
import { expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { prometheusMetrics } from "../../src/observability/prometheus/index.js";
import { describeEachBackend } from "../helpers/backend-targets.js";
import { defineFlowJobs, seedHeldJobs } from "../helpers/flow-seed.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });

/** The value of one `soniq_queue_held_jobs` series in `scrape`, or undefined when absent. */
function held(scrape: string, queue: string, limit: "concurrency" | "rate"): number | undefined {
  const line = scrape
    .split("\n")
    .find((l) => l.startsWith(`soniq_queue_held_jobs{queue="${queue}",limit="${limit}"} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describeEachBackend("soniq_queue_held_jobs", (target) => {
  it("held by concurrency and by rate › the gauge shows 2 and 2, then 0 and 2 once the keyed jobs finish", async () => {
    const backend = await target.open();
    const soniq = new Soniq({
      backend,
      logger: silent,
      env: {},
      pollInterval: 0.05,
      heartbeatInterval: 0.1,
      metricsInterval: 1,
    });
    const { release } = defineFlowJobs(soniq);
    soniq.job({ name: "plain.job", queue: "plain", handler: async () => undefined });
    await soniq.enqueue("plain.job", {}, { delay: 3600 });
    const metrics = prometheusMetrics(soniq);
    const seed = await seedHeldJobs(soniq, release);
    const seeded = Date.now();
    try {
      const both = await waitFor(
        async () => {
          const scrape = await metrics.scrape();
          const c = held(scrape, "tenants", "concurrency");
          const r = held(scrape, "tenants", "rate");
          return c === 2 && r === 2 ? scrape : undefined;
        },
        30_000,
        "held 2 by concurrency and 2 by rate in the scrape",
      );
      expect(held(both, "plain", "concurrency")).toBe(0);
      expect(held(both, "plain", "rate")).toBe(0);
      expect(both).toMatch(/# TYPE soniq_queue_held_jobs gauge/);

      seed.release();
      const after = await waitFor(
        async () => {
          const scrape = await metrics.scrape();
          return held(scrape, "tenants", "concurrency") === 0 ? scrape : undefined;
        },
        30_000,
        "nothing held by concurrency once a's jobs finished",
      );
      // One start a minute: the two rate-limited jobs are still held while the window has not
      // turned (on a machine slow enough to pass it, one more has started).
      expect(held(after, "tenants", "rate")).toBe(Date.now() - seeded < 55_000 ? 2 : 1);
    } finally {
      seed.release();
      await seed.worker.stop();
      await soniq.close();
    }
  });
});
