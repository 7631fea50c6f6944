/**
 * The job counters through the real worker (issue 24 item 10): a handler error with attempts left
 * counts one `failed` and its last attempt one `dead`; a `job_timeout` the same; a success one
 * `done` with its wait from due to start — each in its queue, read back by
 * `soniq.queues.history()`. On a SQLite file and PostgreSQL. The store writes themselves are
 * pinned per method by the contract (test/contract/areas/job-history.ts).
 */
import { pino } from "pino";
import { expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { type BackendTarget, describeEachBackend } from "../helpers/backend-targets.js";
import { waitFor } from "../helpers/wait.js";

/** The counts of `queue`'s last 24 h, summed. */
async function totals(soniq: Soniq, queue: string) {
  const h = await soniq.queues.history({ queue });
  const t = { done: 0, failed: 0, dead: 0, cancelled: 0 };
  for (const p of h.points) {
    t.done += p.done;
    t.failed += p.failed;
    t.dead += p.dead;
    t.cancelled += p.cancelled;
  }
  return t;
}

async function open(target: BackendTarget) {
  const backend = await target.open();
  return new Soniq({
    backend,
    logger: pino({ level: "silent" }),
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
  });
}

describeEachBackend("job counters through the worker", (target) => {
  it("handler error, job_timeout, success › one failed per retried attempt, one dead per move, one done each, per queue", async () => {
    const soniq = await open(target);
    const failing = soniq.job({
      name: "history.fail",
      queue: "errors",
      maxAttempts: 2,
      retry: { kind: "fixed", delay: 0.05 },
      handler: async () => {
        throw new Error("no");
      },
    });
    const slow = soniq.job({
      name: "history.slow",
      queue: "slow",
      maxAttempts: 2,
      timeout: 0.2,
      retry: { kind: "fixed", delay: 0.05 },
      handler: async (_args: unknown, ctx) => {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 30_000);
          ctx.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve();
          });
        });
        ctx.signal.throwIfAborted();
      },
    });
    const fine = soniq.job({ name: "history.ok", queue: "fine", handler: async () => 1 });
    const ids = [
      await failing.enqueue({}),
      await slow.enqueue({}),
      await fine.enqueue({}),
      await fine.enqueue({}),
    ];
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    await waitFor(
      async () => {
        const rows = await Promise.all(ids.map((id) => soniq.jobs.get(id)));
        return rows.every((r) => r?.status === "done" || r?.status === "dead_letter");
      },
      30_000,
      "every job finished or dead-lettered",
    );
    await worker.stop();
    expect(await totals(soniq, "errors")).toEqual({ done: 0, failed: 1, dead: 1, cancelled: 0 });
    expect(await totals(soniq, "slow")).toEqual({ done: 0, failed: 1, dead: 1, cancelled: 0 });
    expect(await totals(soniq, "fine")).toEqual({ done: 2, failed: 0, dead: 0, cancelled: 0 });
    const fineHistory = await soniq.queues.history({ queue: "fine" });
    for (const p of fineHistory.points) {
      expect(p.waitAvgSeconds).toBeGreaterThanOrEqual(0);
      expect(p.waitAvgSeconds).toBeLessThan(30);
    }
    await soniq.close();
  });
});
