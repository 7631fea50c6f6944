/**
 * Issue 10's reproductions, with real `soniq worker` processes on a SQLite file and on PostgreSQL:
 * the drain bound holds for a claim held up by a lock and for a slow asynchronous argument schema
 * (nothing starts after FORCE_TIMEOUT_PATH); a floating rejection does not end the worker and an
 * uncaught exception exits 4, never 1; a poison job claimed with other jobs reaches crash_loop
 * within maxInterruptions + 2 crashes and charges no other job an interruption.
 */

import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { crashLoopRule } from "../../src/maintenance/policy.js";
import { REPO } from "../helpers/cli.js";
import { prepared, startWorker, targets } from "../helpers/e2e-targets.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

/** Job ids whose handler ran, from the fixture's run log. */
function runs(path: string): string[] {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
}

/** Holds the store's write lock (SQLite: the file's; PostgreSQL: an EXCLUSIVE lock on soniq_jobs). */
async function lockStore(env: Record<string, string>): Promise<() => Promise<void>> {
  const url = env.SONIQ_DATABASE_URL!;
  if (url.startsWith("sqlite:")) {
    // Another process, as in the reproduction: it holds the write lock until told to commit.
    const holder = spawn(
      process.execPath,
      [
        "-e",
        `const D = require("better-sqlite3"); const db = new D(process.argv[1]);
         db.exec("BEGIN IMMEDIATE"); process.stdout.write("locked\\n");
         process.stdin.once("data", () => { db.exec("COMMIT"); db.close(); process.exit(0); });`,
        url.slice("sqlite:".length),
      ],
      { cwd: REPO, stdio: ["pipe", "pipe", "inherit"] },
    );
    await new Promise<void>((resolve) => holder.stdout?.once("data", () => resolve()));
    return async () => {
      holder.stdin?.write("commit\n");
      await new Promise((resolve) => holder.once("exit", resolve));
    };
  }
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  await client.query("BEGIN");
  await client.query(`LOCK TABLE "${env.SONIQ_SCHEMA}".soniq_jobs IN EXCLUSIVE MODE`);
  return async () => {
    await client.query("COMMIT");
    await client.end();
  };
}

// Short windows so the tests are quick (docs/reliability.md: the bounds scale with them).
const FAST = {
  SONIQ_HEARTBEAT_INTERVAL: "0.2",
  SONIQ_HEARTBEAT_TIMEOUT: "1",
  SONIQ_POLL_INTERVAL: "0.1",
};

for (const target of targets) {
  describe.skipIf(target.skip)(`correctness under stress, real processes, ${target.label}`, () => {
    it("drain › a claim held up by a lock past FORCE_TIMEOUT_PATH › nothing starts and the drain ends within the bound", async () => {
      const runLog = join(tempDir(), "runs.log");
      const { env, db } = await prepared(target, {
        SONIQ_SHUTDOWN_TIMEOUT: "1",
        SONIQ_SHUTDOWN_SETTLE: "0.2",
        E2E_RUN_LOG: runLog,
      });
      const w = startWorker(env);
      await w.ready;
      // Due in 2 s: by then the lock is held (on SQLite another process must start and take it,
      // which took over 300 ms on a loaded machine: the job then ran before the lock), so the
      // worker's claim of it waits for the lock; SIGTERM 700 ms after it is due.
      const enqueuedAt = Date.now();
      const id = await db.enqueue("e2e.noop", {}, { delay: 2 });
      const unlock = await lockStore(env);
      expect(Date.now() - enqueuedAt, "the lock came after the job was due").toBeLessThan(2000);
      await new Promise((r) => setTimeout(r, Math.max(0, enqueuedAt + 2700 - Date.now())));
      const t0 = Date.now();
      const exitedAt = w.exited.then(() => Date.now());
      w.child.kill("SIGTERM");
      // The lock outlives the deadline by 5 s: a drain that waited for the claim would end then.
      await Promise.race([exitedAt, new Promise((r) => setTimeout(r, 6000))]);
      await unlock();
      const exit = await w.exited;
      const elapsed = (await exitedAt) - t0 - 50; // exited resolves 50 ms after the exit event
      expect(exit.code, exit.stderr).toBe(1);
      expect(runs(runLog)).toEqual([]); // the handler never started
      await new Promise((r) => setTimeout(r, 300)); // a late claim's NACK, if any, lands
      expect(await db.getJob(id)).toMatchObject({
        status: "queued",
        attempts: 0,
        interruptions: 0,
        workerId: null,
      });
      // shutdownTimeout + settle; then on SQLite, whose whole file is locked, the worker's own
      // bookkeeping writes (heartbeat stop and stopped mark, given up after 2 s each), and on
      // PostgreSQL the close, which cancels maintenance statements still waiting after 1 s; plus
      // a margin: well before the lock ends (docs/shutdown.md, "Bounds").
      const sqlite = target.label.includes("SQLite");
      expect(elapsed).toBeLessThan(1000 + 200 + (sqlite ? 4000 : 1000) + 1500);
      await db.close();
    }, 60_000);

    it("drain › a slow asynchronous argument schema at FORCE_TIMEOUT_PATH › abandoned, the row NACK'd unstarted, the drain bounded", async () => {
      const runLog = join(tempDir(), "runs.log");
      const { env, db } = await prepared(target, {
        SONIQ_SHUTDOWN_TIMEOUT: "1",
        SONIQ_SHUTDOWN_SETTLE: "0.2",
        E2E_RUN_LOG: runLog,
      });
      const id = await db.enqueue("e2e.slow_schema", { schemaMs: 8000 });
      const w = startWorker(env);
      await w.ready;
      await waitFor(async () => (await db.getJob(id))?.status === "processing", 10_000, "claimed");
      const t0 = Date.now();
      w.child.kill("SIGTERM");
      const exit = await w.exited;
      const elapsed = Date.now() - t0;
      expect(exit.code, exit.stderr).toBe(1);
      expect(exit.stderr).toContain("argument check was still running at FORCE_TIMEOUT_PATH");
      expect(exit.stderr).toContain("shutdown_nack");
      expect(elapsed).toBeLessThan(1000 + 200 + 2500); // shutdownTimeout + settle + NACK, generous
      expect(runs(runLog)).toEqual([]);
      expect(await db.getJob(id)).toMatchObject({
        status: "queued",
        attempts: 0,
        workerId: null,
        lastError: null,
      });
      await db.close();
    }, 60_000);

    it("handler mistakes › a floating rejection › logged with its job; the worker and its other jobs go on (exit 0)", async () => {
      const runLog = join(tempDir(), "runs.log");
      const { env, db } = await prepared(target, { E2E_RUN_LOG: runLog });
      const w = startWorker(env);
      await w.ready;
      const careless = await db.enqueue("e2e.floating", { ms: 300 });
      const neighbour = await db.enqueue("e2e.sleep", { ms: 1200 });
      await waitFor(
        async () =>
          (await db.getJob(careless))?.status === "done" &&
          (await db.getJob(neighbour))?.status === "done",
        20_000,
        "both done",
      );
      expect(w.child.exitCode).toBeNull(); // still running
      w.child.kill("SIGTERM");
      const exit = await w.exited;
      expect(exit.code, exit.stderr).toBe(0);
      const line = exit.stderr.split("\n").find((l) => l.includes("unhandled promise rejection"));
      expect(line).toBeDefined();
      expect(JSON.parse(line!)).toMatchObject({ job_id: careless, job_name: "e2e.floating" });
      expect(await db.getJob(careless)).toMatchObject({ attempts: 1, result: "survived" });
      expect(await db.getJob(neighbour)).toMatchObject({ attempts: 1, interruptions: 0 });
      await db.close();
    }, 60_000);

    it("handler mistakes › an uncaught exception › exit 4 (not 1) naming the job; its rows stay for crash recovery", async () => {
      const { env, db } = await prepared(target);
      const w = startWorker(env);
      await w.ready;
      const id = await db.enqueue("e2e.throw_later", {});
      const exit = await w.exited;
      expect(exit.code, exit.stderr).toBe(4);
      const line = exit.stderr.split("\n").find((l) => l.includes("uncaught exception"));
      expect(JSON.parse(line!)).toMatchObject({ job_id: id, exit_code: 4 });
      expect(await db.getJob(id)).toMatchObject({ status: "processing", attempts: 0 });
      await db.close();
    }, 60_000);

    it("handler mistakes › an uncaught exception › the worker row is marked stopped, so a start-up recovery pass requeues its job at once", async () => {
      // A long heartbeat timeout: only the stopped mark can make the owner dead within the test.
      const { env, db } = await prepared(target, { SONIQ_HEARTBEAT_TIMEOUT: "600" });
      const w = startWorker(env);
      await w.ready;
      const id = await db.enqueue("e2e.throw_later", {});
      const exit = await w.exited;
      expect(exit.code, exit.stderr).toBe(4);
      const [row] = await db.workers();
      expect(row).toMatchObject({ status: "stopped", live: false, inFlight: [id] });
      expect(row?.stoppedAt).toBeInstanceOf(Date);
      // A pass that does not count stale heartbeats as death (a worker's start-up recovery).
      const backend = await db.backend();
      const result = await backend.jobRecoverStale({ crashLoop: crashLoopRule(3) });
      expect(result.requeued.map((j) => j.id)).toEqual([id]);
      expect(await db.getJob(id)).toMatchObject({ status: "queued", workerId: null });
      await db.close();
    }, 60_000);

    it("crash accounting › a poison job claimed with others › crash_loop within maxInterruptions + 2 crashes; no other job charged", async () => {
      const { env, db } = await prepared(target, { ...FAST, SONIQ_MAX_INTERRUPTIONS: "3" });
      const poison = await db.enqueue("e2e.suicide", {}, { priority: 1 });
      const others = await Promise.all(
        [0, 1, 2, 3].map(() => db.enqueue("e2e.sleep", { ms: 300 }, { priority: 0 })),
      );
      let crashes = 0;
      while (!(await db.getDeadLetter(poison)) && crashes < 10) {
        const w = startWorker(env);
        const exit = await Promise.race([
          w.exited,
          waitFor(() => db.getDeadLetter(poison), 30_000, "dead letter").then(() => null),
        ]);
        if (exit === null) {
          w.child.kill("SIGTERM");
          await w.exited;
          break;
        }
        expect(exit.signal, exit.stderr).toBe("SIGKILL");
        crashes += 1;
      }
      // The first crash charges nobody (no start was known); each later one charges the poison,
      // which runs alone; the (maxInterruptions + 1)th charge moves it to the DLQ.
      expect(crashes).toBeLessThanOrEqual(3 + 2);
      expect(await db.getDeadLetter(poison)).toMatchObject({
        reason: "crash_loop",
        attempts: 0,
        interruptions: 4,
      });
      const w = startWorker(env);
      await w.ready;
      await waitFor(
        async () => {
          const rows = await Promise.all(others.map((id) => db.getJob(id)));
          return rows.every((r) => r?.status === "done");
        },
        30_000,
        "the others done",
      );
      w.child.kill("SIGTERM");
      expect((await w.exited).code).toBe(0);
      for (const id of others) {
        expect(await db.getDeadLetter(id)).toBeNull();
        expect(await db.getJob(id)).toMatchObject({
          status: "done",
          attempts: 1,
          interruptions: 0,
        });
      }
      await db.close();
    }, 180_000);
  });
}
