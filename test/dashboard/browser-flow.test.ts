/**
 * The queues page shows what flow-control limits hold back (issue 28 item 6), in real Chromium
 * (`/usr/bin/chromium`, playwright-core), on a SQLite file: with keys at their concurrency and
 * rate limits (test/helpers/flow-seed.ts), the `tenants` row says 2 held by concurrency and 2 held
 * by rate, and the top keys table lists `a` running 1/1 with 2 held and `r` with 2 held by rate.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboard } from "../../src/dashboard/index.js";
import { Soniq } from "../../src/index.js";
import { type Served, serve } from "../helpers/dashboard.js";
import { defineFlowJobs, type HeldSeed, seedHeldJobs } from "../helpers/flow-seed.js";

const CHROMIUM = "/usr/bin/chromium";

describe("queues page › flow control in Chromium", () => {
  let browser: Browser;
  let soniq: Soniq;
  let served: Served;
  let seed: HeldSeed;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    const path = join(mkdtempSync(join(tmpdir(), "soniq-flow-")), "db.sqlite");
    soniq = new Soniq({ databaseUrl: `sqlite:${path}`, logLevel: "silent" });
    const { release } = defineFlowJobs(soniq);
    await soniq.setup();
    seed = await seedHeldJobs(soniq, release);
    served = await serve(
      "fetch",
      createDashboard({
        soniq,
        basePath: "/ops",
        auth: () => ({ name: "ada" }),
        access: () => "read-only",
      }),
    );
  }, 120_000);
  afterAll(async () => {
    seed?.release();
    await seed?.worker.stop();
    await served?.close();
    await soniq?.close();
    await browser?.close();
  });

  it("queues page › keys at their limits › held counts per queue and the top keys with running counts", async () => {
    const page = await browser.newPage();
    await page.goto(`${served.root}#/queues`);
    const conc = page.locator('[data-testid="held-concurrency-tenants"]');
    await conc.waitFor({ timeout: 20_000 });
    await expect.poll(() => conc.textContent(), { timeout: 10_000 }).toBe("2");
    expect(await page.locator('[data-testid="held-rate-tenants"]').textContent()).toBe("2");
    const a = page.locator('[data-testid="key-a"]');
    await a.waitFor({ timeout: 10_000 });
    const cells = await a.locator("td").allTextContents();
    expect(cells.slice(0, 5)).toEqual(["tenants", "a", "1/1", "2", "2"]);
    const r = await page.locator('[data-testid="key-r"] td').allTextContents();
    expect(r.slice(0, 7)).toEqual(["tenants", "r", "0", "2", "0", "1/1", "2"]);
    expect(r[7]).not.toBe("—");
    await page.close();
  }, 60_000);
});
