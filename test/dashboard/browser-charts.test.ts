/**
 * The history charts in real Chromium (Debian's `/usr/bin/chromium`, driven by playwright-core),
 * on a SQLite file and PostgreSQL, with a day of seeded history: counter rows written by SQL the
 * way the product writes them (test/helpers/history-seed.ts), plus one job that really runs and
 * fails into the dead-letter queue. The overview's chart section shows the window's totals of
 * every queue (its `data-*` attributes and legend), draws a line per series with axes and units;
 * the queues page's chart link shows one queue's totals; a queue with no history says "No jobs in
 * the last 24 h."; no CSP violation, no request off the origin. Nothing here reads pixels.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboard } from "../../src/dashboard/index.js";
import { Soniq } from "../../src/index.js";
import { type Served, serve } from "../helpers/dashboard.js";
import {
  DAY_OF_HISTORY,
  expectedTotals,
  type SeedStore,
  seedCounts,
} from "../helpers/history-seed.js";
import {
  dropSchemas,
  freshSchema,
  postgresAvailable,
  TEST_DATABASE_URL,
} from "../helpers/postgres.js";
import { waitFor } from "../helpers/wait.js";

const CHROMIUM = "/usr/bin/chromium";
const pgAvailable = await postgresAvailable();

let browser: Browser;
beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
});
afterAll(() => browser?.close());

/** The totals the chart section carries as `data-*` attributes. */
async function shownTotals(page: Page) {
  const section = page.locator('[data-testid="history"]');
  await section.waitFor({ state: "visible", timeout: 10_000 });
  const attr = async (name: string) => Number(await section.getAttribute(`data-${name}`));
  return {
    queue: await section.getAttribute("data-queue"),
    done: await attr("done"),
    failed: await attr("failed"),
    dead: await attr("dead"),
    cancelled: await attr("cancelled"),
    waitAvg: await attr("wait-avg"),
  };
}

for (const kind of ["sqlite", "postgres"] as const) {
  describe.skipIf(kind === "postgres" && !pgAvailable)(
    `history charts in Chromium › ${kind}`,
    () => {
      const schema = freshSchema("soniq_charts");
      const path = join(mkdtempSync(join(tmpdir(), "soniq-charts-")), "db.sqlite");
      let soniq: Soniq;
      let served: Served;
      let context: BrowserContext;
      const problems: string[] = [];

      beforeAll(async () => {
        soniq =
          kind === "sqlite"
            ? new Soniq({ databaseUrl: `sqlite:${path}`, logLevel: "silent" })
            : new Soniq({ databaseUrl: TEST_DATABASE_URL, schema, logLevel: "silent" });
        soniq.job({
          name: "charts.fail",
          queue: "mail",
          maxAttempts: 1,
          handler: async () => {
            throw new Error("no");
          },
        });
        await soniq.setup();
        const store: SeedStore =
          kind === "sqlite" ? { kind, path } : { kind, databaseUrl: TEST_DATABASE_URL, schema };
        await seedCounts(store, DAY_OF_HISTORY);
        // One job that really runs and is dead-lettered: counted by the product's own write.
        const id = await soniq.enqueue("charts.fail", {});
        const worker = soniq.worker({ concurrency: 1, pollInterval: 0.05 });
        await worker.start();
        await waitFor(
          async () => (await soniq.jobs.get(id))?.status === "dead_letter",
          20_000,
          "the job dead-lettered",
        );
        await worker.stop();
        served = await serve(
          "fetch",
          createDashboard({
            soniq,
            basePath: "/ops",
            auth: (req) =>
              req.headers.get("authorization") === "Bearer ada" ? { name: "ada" } : null,
            access: () => "read-only",
          }),
        );
        context = await browser.newContext({ extraHTTPHeaders: { authorization: "Bearer ada" } });
      }, 120_000);

      afterAll(async () => {
        await context?.close();
        await served?.close();
        await soniq?.close();
        if (kind === "postgres") await dropSchemas([schema]);
      });

      async function page(): Promise<Page> {
        const p = await context.newPage();
        const origin = new URL(served.root).origin;
        p.on("request", (r) => {
          if (new URL(r.url()).origin !== origin) problems.push(`off origin: ${r.url()}`);
        });
        p.on("console", (m) => {
          if (/Content Security Policy/i.test(m.text())) problems.push(m.text());
        });
        return p;
      }

      it("overview › a seeded day and one dead-lettered job › the charts show every queue's 24 h totals, with a line per series, axes and units", async () => {
        const p = await page();
        await p.goto(`${served.root}#/`);
        const want = expectedTotals(DAY_OF_HISTORY);
        expect(await shownTotals(p)).toEqual({
          queue: "",
          done: want.done,
          failed: want.failed,
          dead: want.dead + 1,
          cancelled: want.cancelled,
          waitAvg: expect.closeTo(want.waitAvg ?? Number.NaN, 9),
        });
        if (process.env.DASHBOARD_SCREENSHOTS === "1" && kind === "sqlite") {
          await p.setViewportSize({ width: 1100, height: 900 });
          await p.locator('[data-testid="history"]').screenshot({
            path: "docs/images/dashboard-charts.png",
          });
        }
        const legend = p.locator('[data-testid="history-legend"]');
        expect(await legend.locator('[data-testid="history-total-done"]').textContent()).toBe(
          String(want.done),
        );
        expect(await legend.locator('[data-testid="history-total-dead"]').textContent()).toBe(
          String(want.dead + 1),
        );
        const jobs = p.locator('[data-testid="chart-jobs"]');
        for (const series of ["done", "failed", "dead"]) {
          const d = await jobs.locator(`path.series-${series}`).getAttribute("d");
          expect(d ?? "", series).toMatch(/^M/);
        }
        expect(await jobs.locator("text.unit").textContent()).toBe("jobs / min");
        expect(await jobs.locator("text.tick").allTextContents()).toEqual(
          expect.arrayContaining(["0", "−24 h", "−12 h", "now"]),
        );
        // The overview's 24 h card reads the same counters.
        const day = p.locator('[data-testid="window-24h"]');
        expect(await day.textContent()).toContain(`${want.done} done`);
        expect(await day.textContent()).toContain(`${want.dead + 1} dead-lettered`);
        const wait = p.locator('[data-testid="chart-wait"]');
        expect(await wait.locator("text.unit").textContent()).toBe("seconds");
        expect(await wait.locator("path.series-wait").getAttribute("d")).toMatch(/^M/);
        expect(problems).toEqual([]);
        await p.close();
      });

      it("queues page › the chart link of pdf › that queue's totals only; a queue with no history says so", async () => {
        const p = await page();
        await p.goto(`${served.root}#/queues`);
        await p.locator('[data-testid="history-link-pdf"]').click();
        await p.locator('[data-testid="history"][data-queue="pdf"]').waitFor({ timeout: 10_000 });
        const want = expectedTotals(DAY_OF_HISTORY, "pdf");
        expect(await shownTotals(p)).toEqual({
          queue: "pdf",
          done: want.done,
          failed: want.failed,
          dead: want.dead,
          cancelled: want.cancelled,
          waitAvg: expect.closeTo(want.waitAvg ?? Number.NaN, 9),
        });
        await p.goto(`${served.root}#/queues?queue=idle`);
        await p.locator('[data-testid="history"][data-queue="idle"]').waitFor({ timeout: 10_000 });
        expect(await p.locator('[data-testid="history-empty"]').textContent()).toBe(
          "No jobs in the last 24 h.",
        );
        expect(await p.locator('[data-testid="chart-jobs"]').count()).toBe(0);
        expect(problems).toEqual([]);
        await p.close();
      });
    },
  );
}
