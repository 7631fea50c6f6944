/**
 * Rate limits across real worker processes (issue 28 items 3, 5; docs/flow-control.md, "Rate
 * limits"), on a SQLite file and on PostgreSQL: two `soniq worker` processes (prefetch on) drain
 * 15 jobs of one tenant limited to 3 starts a second; one worker gets SIGTERM while jobs are held
 * by the limit. Checks: the SIGTERM'd worker exits 0 within a few seconds (held jobs hold no slot
 * and do not extend its drain) and owns no row; every job is done once with attempts 1; the
 * stored start instants never put more than 3 in any second; the drain took the windows it must.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type Running, runCli, startCli } from "../helpers/cli.js";
import { prepared, targets, WORKER_READY_TIMEOUT_MS } from "../helpers/e2e-targets.js";
import { waitFor } from "../helpers/wait.js";

const FIXTURE = "test/fixtures/rate-jobs.ts";

function startRatedWorker(env: Record<string, string>): Running & { ready: Promise<unknown> } {
  const worker = startCli(["worker", FIXTURE], env);
  const ready = waitFor(
    () => worker.stderr().includes("worker started"),
    WORKER_READY_TIMEOUT_MS,
    "worker started",
  );
  return { ...worker, ready };
}

const children: Running[] = [];
afterAll(() => {
  for (const c of children) if (c.child.exitCode === null) c.child.kill("SIGKILL");
});

for (const target of targets) {
  describe.skipIf(target.skip)(`rate limits across worker processes on ${target.label}`, () => {
    it(`${target.label} › 2 soniq workers, 15 jobs at 3 a second, one SIGTERM'd while jobs wait › prompt drain, starts per second <= 3, all done once, attempts 1`, async () => {
      const prep = await prepared(target, { SONIQ_PREFETCH: "3", SONIQ_CONCURRENCY: "4" });
      const { db } = prep;
      const rated = db.job({
        name: "tenant.rated",
        rateLimit: { limit: 3, per: 1, key: (args: { tenant: string }) => args.tenant },
        handler: async () => undefined,
      });
      const ids: string[] = [];
      for (let n = 0; n < 15; n++) ids.push(await rated.enqueue({ tenant: "acme" }));
      const workers = [0, 1].map(() => startRatedWorker(prep.env));
      children.push(...workers);
      await Promise.all(workers.map((w) => w.ready));
      const done = async () =>
        (await Promise.all(ids.map((id) => db.getJob(id)))).filter((j) => j?.status === "done")
          .length;
      await waitFor(async () => (await done()) >= 4, 60_000);
      // Jobs are queued and held by the limit now: the drain must not wait for them.
      const began = Date.now();
      workers[0]!.child.kill("SIGTERM");
      const stopped = await workers[0]!.exited;
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(Date.now() - began).toBeLessThan(10_000);
      await waitFor(async () => (await done()) === ids.length, 120_000);
      workers[1]!.child.kill("SIGTERM");
      expect((await workers[1]!.exited).code).toBe(0);
      const rows = await Promise.all(ids.map((id) => db.getJob(id)));
      await db.close();
      for (const row of rows) expect(row).toMatchObject({ status: "done", attempts: 1 });
      const starts = rows.map((r) => r!.startedAt!.getTime()).sort((a, b) => a - b);
      // Any window a little shorter than a second (the claim's instant and the bucket's differ
      // by the claim lock's wait on PostgreSQL) holds at most 3 starts.
      for (let i = 0; i < starts.length; i++) {
        const inWindow = starts.filter((t) => t >= starts[i]! && t < starts[i]! + 900).length;
        expect(inWindow).toBeLessThanOrEqual(3);
      }
      // 15 starts at 3 a second: at least 4 seconds between the first and the last.
      expect(starts[starts.length - 1]! - starts[0]!).toBeGreaterThanOrEqual(4 * 1000 - 100);
    }, 240_000);

    it(`${target.label} › a key at its limit, a job held › soniq status --json shows the key's starts and next window`, async () => {
      const prep = await prepared(target);
      const { db } = prep;
      const hourly = db.job({
        name: "tenant.hourly",
        rateLimit: { limit: 1, per: 60, key: (args: { tenant: string }) => args.tenant },
        handler: async () => undefined,
      });
      const first = await hourly.enqueue({ tenant: "beta" });
      const held = await hourly.enqueue({ tenant: "beta" });
      const worker = startRatedWorker(prep.env);
      children.push(worker);
      await worker.ready;
      await waitFor(async () => (await db.getJob(first))?.status === "done", 60_000);
      const status = await runCli(["status", "--json"], prep.env);
      expect(status.code, status.stderr).toBe(0);
      const json = JSON.parse(status.stdout) as {
        rateKeys: Array<{ key: string; startsInWindow: number; nextWindowAt: string | null }>;
      };
      expect(json.rateKeys).toHaveLength(1);
      expect(json.rateKeys[0]).toMatchObject({ key: "beta", startsInWindow: 1 });
      const next = Date.parse(json.rateKeys[0]!.nextWindowAt ?? "");
      expect(next).toBeGreaterThan(Date.now() + 30_000);
      expect(await db.getJob(held)).toMatchObject({ status: "queued", attempts: 0 });
      worker.child.kill("SIGTERM");
      expect((await worker.exited).code).toBe(0);
      await db.close();
    }, 120_000);
  });
}
