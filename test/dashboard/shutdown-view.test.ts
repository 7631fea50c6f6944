/**
 * The shutdown as the dashboard shows it, with a real `soniq worker` process on a SQLite file: a
 * long job runs, the worker gets SIGTERM; the workers page shows DRAINING with the deadline
 * counting down; after the deadline the job's timeline shows the NACK and its attempts are
 * unchanged (0). With `DASHBOARD_SCREENSHOTS=1` it also writes the draining workers screenshot.
 */
import { mkdirSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboard } from "../../src/dashboard/index.js";
import { serve } from "../helpers/dashboard.js";
import { prepared, startWorker, targets } from "../helpers/e2e-targets.js";
import { waitFor } from "../helpers/wait.js";

const sqlite = targets.find((t) => t.label === "SQLite file");
let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
});
afterAll(() => browser?.close());

describe("dashboard › shutdown view", () => {
  it("dashboard › a worker with a long job gets SIGTERM › DRAINING with the deadline, then the NACK with attempts unchanged", async () => {
    if (!sqlite) throw new Error("no SQLite target");
    const { env, db } = await prepared(sqlite, {
      SONIQ_SHUTDOWN_TIMEOUT: "4",
      SONIQ_SHUTDOWN_SETTLE: "0.2",
      SONIQ_HEARTBEAT_INTERVAL: "0.2",
    });
    const id = await db.enqueue("e2e.stubborn", { ms: 30_000 });
    const served = await serve(
      "fetch",
      createDashboard({ soniq: db, basePath: "/ops", auth: "none" }),
    );
    const w = startWorker(env);
    try {
      await w.ready;
      await waitFor(async () => (await db.getJob(id))?.status === "processing", 10_000, "claimed");
      const page = await browser.newPage();
      await page.goto(`${served.root}#/workers`);
      await page.locator("[data-testid=worker-row]").first().waitFor();
      w.child.kill("SIGTERM");
      const state = page.locator("[data-testid=shutdown-state]").first();
      await state.getByText("DRAINING").waitFor({ timeout: 5_000 });
      const countdown = page.locator("[data-testid=countdown]").first();
      await countdown.waitFor({ timeout: 5_000 });
      expect(await countdown.textContent()).toMatch(/\ds to deadline/);
      if (process.env.DASHBOARD_SCREENSHOTS === "1") {
        mkdirSync("docs/images", { recursive: true });
        await page.screenshot({ path: "docs/images/dashboard-workers-draining.png" });
      }
      const exit = await w.exited;
      expect(exit.code, exit.stderr).toBe(1); // the deadline path: the job was NACK'd
      await page.goto(`${served.root}#/jobs/${encodeURIComponent(id)}`);
      await page.locator("[data-testid=timeline-nack]").waitFor({ timeout: 5_000 });
      expect(await page.locator("[data-testid=attempts]").textContent()).toMatch(/^0 of /);
      if (process.env.DASHBOARD_SCREENSHOTS === "1") {
        await page.screenshot({ path: "docs/images/dashboard-job-nack.png" });
      }
      expect(await db.getJob(id)).toMatchObject({ status: "queued", attempts: 0 });
      await page.close();
    } finally {
      if (w.child.exitCode === null) w.child.kill("SIGKILL");
      await served.close();
      await db.close();
    }
  }, 40_000);
});
