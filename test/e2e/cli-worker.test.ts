/**
 * Real processes: `soniq setup | enqueue | status | worker`, SIGTERM at awkward moments, exit codes
 * and rows — on a SQLite file and on PostgreSQL.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { FIXTURE, prepared, startWorker, targets } from "../helpers/e2e-targets.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

describe("soniq CLI usage", () => {
  it("usage errors exit 2 (start-up error), never 1; --help and --version exit 0", async () => {
    for (const args of [
      ["bogus"],
      ["worker"],
      ["enqueue", "a.b", "--delay", "soon"],
      ["status", "--nope"],
    ]) {
      const r = await runCli(args, { SONIQ_DATABASE_URL: "memory:" });
      expect(r.code, args.join(" ")).toBe(2);
    }
    expect((await runCli(["--help"], {})).code).toBe(0);
    const version = await runCli(["--version"], {});
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

for (const target of targets) {
  describe.skipIf(target.skip)(`soniq CLI on ${target.label}`, () => {
    it("setup is idempotent; enqueue prints an id; status counts; an idle worker exits 0 on SIGTERM", async () => {
      const { env, db } = await prepared(target);
      expect((await runCli(["setup"], env)).code).toBe(0);
      const enq = await runCli(["enqueue", "e2e.noop", "--args", "{}", "--priority", "3"], env);
      expect(enq.code, enq.stderr).toBe(0);
      const id = enq.stdout.trim();
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const status = await runCli(["status", "--json"], env);
      expect(JSON.parse(status.stdout)).toMatchObject({
        total: 1,
        queued: 1,
        processing: 0,
        done: 0,
        deadLetter: 0,
        cancelled: 0,
      });

      const w = startWorker(env);
      await w.ready;
      await waitFor(async () => (await db.getJob(id))?.status === "done", 10_000, "job done");
      const live = JSON.parse((await runCli(["status", "--json"], env)).stdout);
      expect(live.workers).toHaveLength(1);
      const t0 = Date.now();
      w.child.kill("SIGTERM");
      const exit = await w.exited;
      expect(exit.code).toBe(0);
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(exit.stderr).toContain('"exit_reason":"drained"');
      expect(exit.stderr).toContain('"signal":"SIGTERM"');
      const after = JSON.parse((await runCli(["status", "--json"], env)).stdout);
      expect(after).toMatchObject({ done: 1, workers: [] });
      await db.close();
    });

    it("SIGTERM during a job that finishes inside shutdown_timeout records it done (exit 0)", async () => {
      const { env, db } = await prepared(target);
      const id = await db.enqueue("e2e.sleep", { ms: 1500 });
      const w = startWorker(env, ["--shutdown-timeout", "10"]);
      await w.ready;
      await waitFor(async () => (await db.getJob(id))?.status === "processing", 10_000, "claimed");
      w.child.kill("SIGTERM");
      const exit = await w.exited;
      expect(exit.code, exit.stderr).toBe(0);
      expect(await db.getJob(id)).toMatchObject({
        status: "done",
        attempts: 1,
        result: { slept: 1500 },
      });
      await db.close();
    });

    it("SIGTERM past shutdown_timeout NACKs honouring and ignoring handlers alike (exit 1, bounded)", async () => {
      const { env, db } = await prepared(target, { SONIQ_SHUTDOWN_SETTLE: "0.5" });
      const honours = await db.enqueue("e2e.sleep", { ms: 60_000 });
      const ignores = await db.enqueue("e2e.stubborn", { ms: 60_000 });
      const idle = await db.enqueue("e2e.noop", {}, { delay: 3600 });
      const w = startWorker(env, ["--shutdown-timeout", "1.5"]);
      await w.ready;
      await waitFor(async () => (await db.stats()).processing === 2, 10_000, "both claimed");
      const t0 = Date.now();
      w.child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 700));
      w.child.kill("SIGTERM"); // a repeat must not move the deadline
      const exit = await w.exited;
      const elapsed = Date.now() - t0;
      expect(exit.code, exit.stderr).toBe(1);
      // shutdown_timeout 1.5 s + settle 0.5 s + NACK + exit, with margin; well below the 60 s jobs.
      expect(elapsed).toBeGreaterThanOrEqual(1_400);
      expect(elapsed).toBeLessThan(6_000);
      expect(exit.stderr).toContain('"exit_reason":"shutdown_timeout"');
      expect(exit.stderr).toContain("stop requested again");
      for (const id of [honours, ignores]) {
        expect(await db.getJob(id)).toMatchObject({
          status: "queued",
          attempts: 0,
          lastError: null,
          workerId: null,
          claimToken: null,
        });
      }
      expect(await db.getJob(idle)).toMatchObject({ status: "queued" });
      await db.close();
    });

    it("refuses to start with exit 2: no jobs, a missing module, a bad setting", async () => {
      const { env } = await prepared(target);
      const noJobs = await runCli(["worker", "test/fixtures/no-jobs.ts"], env);
      expect(noJobs.code).toBe(2);
      expect(noJobs.stderr).toContain("WORKER_START");
      const missing = await runCli(["worker", "test/fixtures/nope.ts"], env);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("MODULE_LOAD");
      const badEnv = await runCli(["worker", FIXTURE], { ...env, SONIQ_CONCURENCY: "4" });
      expect(badEnv.code).toBe(2);
      expect(badEnv.stderr).toContain("SONIQ_CONCURENCY");
      const badValue = await runCli(["worker", FIXTURE], { ...env, SONIQ_SHUTDOWN_TIMEOUT: "-3" });
      expect(badValue.code).toBe(2);
      expect(badValue.stderr).toContain("INVALID_OPTION");
    });

    it("three workers run 5,000 jobs exactly once; a SIGTERM'd one drains and strands nothing", async () => {
      const { env, db } = await prepared(target);
      const runLog = join(tempDir(), "runs.log");
      const total = 5000;
      const items = Array.from({ length: total }, (_, i) => ({
        name: "e2e.sleep",
        args: { ms: 5 + (i % 5) },
      }));
      for (let i = 0; i < total; i += 1000) await db.enqueueMany(items.slice(i, i + 1000));
      const workers = [0, 1, 2].map(() =>
        startWorker({ ...env, E2E_RUN_LOG: runLog }, ["--concurrency", "5"]),
      );
      await Promise.all(workers.map((w) => w.ready));
      await waitFor(async () => (await db.stats()).done >= total / 5, 60_000, "some progress");
      const t0 = Date.now();
      workers[0]?.child.kill("SIGTERM");
      const first = await workers[0]?.exited;
      expect([0, 1]).toContain(first?.code);
      expect(Date.now() - t0).toBeLessThan(30_000 + 5_000);
      await waitFor(async () => (await db.stats()).done === total, 120_000, "all done");
      for (const w of workers.slice(1)) w.child.kill("SIGTERM");
      for (const w of workers.slice(1)) expect((await w.exited).code).toBe(0);
      const runs = readFileSync(runLog, "utf8").trim().split("\n");
      expect(runs).toHaveLength(total);
      expect(new Set(runs).size).toBe(total);
      expect(await db.stats()).toMatchObject({
        total,
        done: total,
        queued: 0,
        processing: 0,
        deadLetter: 0,
      });
      await db.close();
    }, 180_000);
  });
}
