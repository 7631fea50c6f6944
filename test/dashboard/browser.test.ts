/**
 * The dashboard in real Chromium (Debian's `/usr/bin/chromium`, driven by playwright-core; no
 * browser is downloaded), on SQLite and PostgreSQL databases seeded with hostile data: names,
 * arguments and errors with script tags, `javascript:` URLs, NUL and lone surrogates, and a 20 MB
 * result. No dialog fires, no script of the data runs, no request leaves the origin, the page
 * follows its CSP, each page renders within {@link RENDER_BOUND_MS}, the big result is cut, and a
 * read-only user sees no write button. With `DASHBOARD_SCREENSHOTS=1` it also writes the screenshots
 * of docs/dashboard.md.
 */
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboard } from "../../src/dashboard/index.js";
import type { Soniq } from "../../src/index.js";
import { RENDER_BOUND_MS, type Served, serve } from "../helpers/dashboard.js";
import {
  dropSchemas,
  freshSchema,
  postgresAvailable,
  TEST_DATABASE_URL,
} from "../helpers/postgres.js";
import { HOSTILE, type Seeded, seed, seededInstance } from "./seed.js";

const RESULT_BYTES = 20 * 1024 * 1024;
const CHROMIUM = "/usr/bin/chromium";
const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS === "1";
const pgAvailable = await postgresAvailable();

/** What a page did that it must not. */
interface Watch {
  dialogs: string[];
  offOrigin: string[];
  cspViolations: string[];
  /** Responses of 500 or more (the page must never cause one). */
  serverErrors: string[];
}

function watch(page: Page, origin: string): Watch {
  const w: Watch = { dialogs: [], offOrigin: [], cspViolations: [], serverErrors: [] };
  page.on("response", (response) => {
    if (response.status() >= 500) w.serverErrors.push(`${response.status()} ${response.url()}`);
  });
  page.on("dialog", (dialog) => {
    w.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on("request", (request) => {
    if (new URL(request.url()).origin !== origin) w.offOrigin.push(request.url());
  });
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) w.cspViolations.push(message.text());
  });
  return w;
}

/** Opens `hash` and waits for `selector`; returns the time it took. */
async function open(page: Page, root: string, hash: string, selector: string): Promise<number> {
  const start = Date.now();
  await page.goto(`${root}#${hash}`);
  await page.locator(selector).first().waitFor({ state: "visible", timeout: 20_000 });
  return Date.now() - start;
}

let browser: Browser;
beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
});
afterAll(() => browser?.close());

const BACKENDS = [
  { kind: "sqlite", available: true },
  { kind: "postgres", available: pgAvailable },
] as const;

for (const backend of BACKENDS) {
  describe.skipIf(!backend.available)(`dashboard in Chromium › ${backend.kind}`, () => {
    let soniq: Soniq;
    let ids: Seeded;
    let served: Served;
    let admin: BrowserContext;
    let viewer: BrowserContext;
    const schema = freshSchema("soniq_dash");

    beforeAll(async () => {
      const databaseUrl =
        backend.kind === "sqlite"
          ? `sqlite:${join(mkdtempSync(join(tmpdir(), "soniq-dash-")), "db.sqlite")}`
          : TEST_DATABASE_URL;
      soniq = seededInstance(
        backend.kind === "postgres" ? { databaseUrl, schema } : { databaseUrl },
        RESULT_BYTES,
      );
      ids = await seed(soniq);
      const dashboard = createDashboard({
        soniq,
        basePath: "/deep/prefix/jobs",
        auth: (req) => {
          const token = req.headers.get("authorization");
          return token === "Bearer admin"
            ? { name: "ada" }
            : token === "Bearer viewer"
              ? { name: "vic" }
              : null;
        },
        access: (user) => (user.name === "ada" ? "all" : "read-only"),
      });
      served = await serve("fetch", dashboard);
      admin = await browser.newContext({ extraHTTPHeaders: { authorization: "Bearer admin" } });
      viewer = await browser.newContext({ extraHTTPHeaders: { authorization: "Bearer viewer" } });
    }, 120_000);

    afterAll(async () => {
      await admin?.close();
      await viewer?.close();
      await served?.close();
      await soniq?.close();
      if (backend.kind === "postgres") await dropSchemas([schema]);
    });

    it(`dashboard in Chromium › ${backend.kind} hostile data › rendered as text on every page, nothing runs, nothing leaves the origin`, async () => {
      const page = await admin.newPage();
      const origin = new URL(served.root).origin;
      const w = watch(page, origin);
      const pages: Array<[string, string, string]> = [
        ["overview", "/", "text=Jobs by queue and status"],
        ["jobs", "/jobs", `a[href="#/jobs/${ids.done}"]`],
        ["job", `/jobs/${ids.done}`, "[data-testid=truncated-result]"],
        ["retried", `/jobs/${ids.retried}`, "[data-testid=last-error]"],
        ["dead-letters", "/dead-letter", `a[href="#/dead-letter/${ids.dead}"]`],
        ["dead-letter", `/dead-letter/${ids.dead}`, "[data-testid=value-arguments]"],
        ["queues", "/queues", "text=maxRunning"],
        ["workers", "/workers", "[data-testid=worker-row]"],
      ];
      for (const [name, hash, selector] of pages) {
        const ms = await open(page, served.root, hash, selector);
        expect(ms, `${name} rendered in ${ms} ms`).toBeLessThan(RENDER_BOUND_MS);
        expect(await page.locator('img[src="x"], script:not([src])').count(), name).toBe(0);
        if (SCREENSHOTS && backend.kind === "sqlite") {
          mkdirSync("docs/images", { recursive: true });
          await page.screenshot({ path: `docs/images/dashboard-${name}.png`, fullPage: false });
        }
      }
      // Every count of the overview's table opens its list; the dead-letter column opens the
      // dead letters of that queue (the jobs list has no dead_letter status).
      await open(page, served.root, "/", "text=Jobs by queue and status");
      await page.locator('a[href="#/dead-letter?queue=default"]').click();
      await page
        .locator(`a[href="#/dead-letter/${ids.dead}"]`)
        .waitFor({ state: "visible", timeout: 10_000 });
      expect(await page.locator('a[href*="status=dead_letter"]').count()).toBe(0);
      // The data is on the page as text.
      await open(page, served.root, `/jobs/${ids.retried}`, "[data-testid=last-error]");
      const lastError = (await page.locator("[data-testid=last-error]").textContent()) ?? "";
      expect(lastError).toContain(HOSTILE);
      const args = (await page.locator("[data-testid=value-arguments]").textContent()) ?? "";
      expect(args).toContain("javascript:alert(4)");
      // A right-to-left override is shown as its escape, never applied.
      expect(lastError).toContain("report\\u202Egnp.exe");
      expect(args).toContain("invoice\\u202Egnp.exe");
      expect(`${lastError}${args}`).not.toContain("\u202E");
      // The 20 MB result is cut server-side: the page holds at most the preview.
      await open(page, served.root, `/jobs/${ids.done}`, "[data-testid=truncated-result]");
      const shown = (await page.locator("[data-testid=value-result]").textContent()) ?? "";
      expect(shown.length).toBeLessThanOrEqual(64 * 1024);
      expect(shown).toContain("<img src=x");
      expect(
        await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned),
      ).toBeUndefined();
      expect(w.dialogs).toEqual([]);
      expect(w.offOrigin).toEqual([]);
      expect(w.cspViolations).toEqual([]);
      expect(w.serverErrors).toEqual([]);
      await page.close();
    });

    it(`dashboard in Chromium › ${backend.kind} read-only user › no write button; an admin sees them`, async () => {
      const page = await viewer.newPage();
      await open(page, served.root, `/jobs/${ids.retried}`, "[data-testid=last-error]");
      expect(
        await page.getByRole("button", { name: /^(Cancel|Retry|Run now|Delete|Replay)$/ }).count(),
      ).toBe(0);
      await open(page, served.root, "/queues", "text=maxRunning");
      expect(await page.getByRole("button", { name: /Pause|Resume|maxRunning/ }).count()).toBe(0);
      await open(page, served.root, "/jobs", `a[href="#/jobs/${ids.done}"]`);
      expect(await page.getByRole("button", { name: /selected|all matching/ }).count()).toBe(0);
      await page.close();
      const adminPage = await admin.newPage();
      await open(adminPage, served.root, `/jobs/${ids.retried}`, "[data-testid=last-error]");
      expect(await adminPage.getByRole("button", { name: "Cancel" }).count()).toBe(1);
      await adminPage.close();
    });
  });
}
