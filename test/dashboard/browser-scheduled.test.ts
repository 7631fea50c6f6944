/**
 * Scheduled work is visible in the dashboard (issue 27 item 3), in real Chromium (Debian's
 * `/usr/bin/chromium`, driven by playwright-core): a job delayed a year is counted `scheduled`
 * apart from `queued` on the overview, the jobs page filters it with `status=scheduled` and shows
 * its due time, and its own page says `scheduled` with the due time and offers "Run now".
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboard } from "../../src/dashboard/index.js";
import { Soniq } from "../../src/index.js";
import { type Served, serve } from "../helpers/dashboard.js";

const CHROMIUM = "/usr/bin/chromium";

describe("dashboard in Chromium › a delayed job", () => {
  let browser: Browser;
  let soniq: Soniq;
  let served: Served;
  let later: string;
  let now: string;
  const runAt = new Date(Date.now() + 365 * 86_400_000);

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
    }
    const dir = mkdtempSync(join(tmpdir(), "soniq-dash-sched-"));
    soniq = new Soniq({
      databaseUrl: `sqlite:${join(dir, "db.sqlite")}`,
      env: {},
      logger: pino({ level: "silent" }),
    });
    soniq.job({ name: "report.send", handler: async () => undefined });
    await soniq.setup();
    later = await soniq.enqueue("report.send", {}, { runAt, queue: "reports" });
    now = await soniq.enqueue("report.send", {}, { queue: "reports" });
    const dashboard = createDashboard({
      soniq,
      basePath: "/deep/prefix/jobs",
      auth: (req) => (req.headers.get("authorization") === "Bearer admin" ? { name: "ada" } : null),
      access: () => "all",
    });
    served = await serve("fetch", dashboard);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await soniq?.close();
  });

  it("dashboard › a job delayed a year › counted scheduled apart from queued, listed and shown with its due time", async () => {
    const context = await browser.newContext({
      extraHTTPHeaders: { authorization: "Bearer admin" },
    });
    const page = await context.newPage();
    try {
      // Overview: the queue's row counts 1 queued and 1 scheduled.
      await page.goto(`${served.root}#/`);
      const table = page.locator("table", { has: page.locator("th", { hasText: "scheduled" }) });
      const row = table.locator("tr", { hasText: "reports" });
      await row.waitFor({ state: "visible", timeout: 10_000 });
      const heads = await table.locator("th").allTextContents();
      const cells = await row.locator("td").allTextContents();
      expect(cells[heads.indexOf("queued")]).toBe("1");
      expect(cells[heads.indexOf("scheduled")]).toBe("1");

      // The scheduled count links to the jobs page filtered by status=scheduled: the delayed job.
      await row.locator("td").nth(heads.indexOf("scheduled")).locator("a").click();
      const listed = page.locator(`a[href$="${later}"]`);
      await listed.waitFor({ state: "visible", timeout: 10_000 });
      await expect.poll(() => page.locator("tbody tr").count(), { timeout: 10_000 }).toBe(1);
      const due = await page.locator("tbody tr").first().getByTestId("due").textContent();
      expect(due).toMatch(/^in \d+h \d+m \d+s \(/);
      expect(await page.locator(`a[href$="${now}"]`).count()).toBe(0);

      // Its own page: status scheduled, the due time, and Run now.
      await listed.click();
      await page.getByText("Run now").waitFor({ state: "visible", timeout: 10_000 });
      expect(await page.locator(".fields .badge").first().textContent()).toBe("scheduled");
      expect(await page.locator(".fields").getByTestId("due").textContent()).toMatch(/^in \d+h/);
      expect(
        await page.locator(".fields").getByTestId("due").locator("time").getAttribute("datetime"),
      ).toBe(runAt.toISOString());
    } finally {
      await context.close();
    }
  }, 60_000);
});
