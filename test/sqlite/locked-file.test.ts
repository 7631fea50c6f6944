/**
 * A SQLite file locked by another process must not freeze a worker: better-sqlite3 is synchronous,
 * so the backend waits for locks in short slices and keeps the event loop free. A worker asked to
 * stop while the file is locked still keeps its shutdown deadline.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

afterAll(() => removeTempDirs());

/** Another process holding an exclusive lock on `path` for `ms`. */
function holdLock(path: string, ms: number) {
  const script = `
    const Database = require(${JSON.stringify(require.resolve("better-sqlite3"))});
    const db = new Database(${JSON.stringify(path)});
    db.exec("BEGIN EXCLUSIVE");
    process.stdout.write("locked\\n");
    setTimeout(() => { db.exec("COMMIT"); db.close(); }, ${ms});
  `;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const locked = new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return { locked, exited, kill: () => child.kill("SIGKILL") };
}

describe("a locked SQLite file", () => {
  it("keeps the event loop free and the drain bounded while another process holds the lock", async () => {
    const path = join(tempDir(), "locked.db");
    const soniq = new Soniq({
      databaseUrl: `sqlite:${path}`,
      env: {},
      logger: pino({ level: "silent" }),
      pollInterval: 0.05,
      heartbeatInterval: 0.1,
      shutdownTimeout: 0.5,
      shutdownSettle: 0.1,
    });
    await soniq.setup();
    const job = soniq.job({
      name: "slow.one",
      // Outlives the deadline however slowly the lock holder starts (a short handler could
      // finish before the lock is taken on a loaded machine, and the drain would then exit 0).
      handler: async (_args, ctx) =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(resolve, 60_000);
          ctx.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            reject(ctx.signal.reason);
          });
        }),
    });
    await job.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.stats()).processing === 1);
    const lock = holdLock(path, 8000);
    await lock.locked;
    // The event loop keeps ticking while the lock is held.
    let ticks = 0;
    const ticker = setInterval(() => {
      ticks += 1;
    }, 50);
    await new Promise((r) => setTimeout(r, 1000));
    clearInterval(ticker);
    // 20 ticks on an idle machine. A call that waited for the lock inside SQLite (busy_timeout)
    // would block the loop for the whole second (0 or 1 tick); a loaded machine delays timers
    // (8 ticks seen with a bench running beside the test), so the bound is 4.
    expect(ticks).toBeGreaterThanOrEqual(4);
    const t0 = Date.now();
    const exit = await worker.stop("SIGTERM");
    const elapsed = Date.now() - t0;
    // The deadline fired on time; the NACK waits for the lock (retried, bounded), then lands.
    expect(exit.exitCode).toBe(1);
    expect(elapsed).toBeLessThan(8000 + 3000);
    await lock.exited;
    const db = new Database(path, { readonly: true });
    const row = db.prepare("SELECT status, attempts FROM soniq_jobs").get() as {
      status: string;
      attempts: number;
    };
    db.close();
    expect(row).toEqual({ status: "queued", attempts: 0 });
    await soniq.close();
  }, 30_000);

  it("read-only use of a missing file does not create it", async () => {
    const path = join(tempDir(), "nested", "missing.db");
    const soniq = new Soniq({
      databaseUrl: `sqlite:${path}`,
      env: {},
      logger: pino({ level: "silent" }),
    });
    await expect(soniq.stats()).rejects.toMatchObject({ code: "SCHEMA_NOT_READY" });
    const { existsSync } = await import("node:fs");
    expect(existsSync(path)).toBe(false);
    await soniq.setup();
    expect(existsSync(path)).toBe(true);
    await soniq.close();
  });
});
