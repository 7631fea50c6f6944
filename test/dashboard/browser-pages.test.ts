/**
 * The schedules page, the remote-jobs page and live bulk progress in real Chromium (Debian's
 * `/usr/bin/chromium`, driven by playwright-core; no browser is downloaded). On SQLite and
 * PostgreSQL: schedules show timing, next runs and last outcome, and pause / run now work for an
 * admin, and the job run now shows on the overview as waiting for a worker that can run it (no
 * worker runs); a frozen remote job is counted on the overview, listed with its idempotency key, shows
 * its remote phases in the job's timeline and is resolved from the page; a read-only user sees no
 * write button; no dialog but our own confirm, no request off the origin, no CSP violation. On
 * SQLite: a cancel of 20 000 matching jobs shows a progress bar that moves through at least two
 * intermediate values and ends with the totals. With `DASHBOARD_SCREENSHOTS=1` it also writes the
 * schedules and remote screenshots of docs/dashboard.md.
 */
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboard } from "../../src/dashboard/index.js";
import { Soniq } from "../../src/index.js";
import { RENDER_BOUND_MS, type Served, serve } from "../helpers/dashboard.js";
import {
  dropSchemas,
  freshSchema,
  postgresAvailable,
  TEST_DATABASE_URL,
} from "../helpers/postgres.js";

const CHROMIUM = "/usr/bin/chromium";
const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS === "1";
const pgAvailable = await postgresAvailable();
/** Jobs the live bulk test cancels (SQLite). */
const BULK_JOBS = 20_000;

interface Watch {
  dialogs: string[];
  offOrigin: string[];
  cspViolations: string[];
}

/** Records what the page must not do; confirms (our own bulk question) are accepted and kept. */
function watch(page: Page, origin: string): Watch {
  const w: Watch = { dialogs: [], offOrigin: [], cspViolations: [] };
  page.on("dialog", (dialog) => {
    w.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void (dialog.type() === "confirm" ? dialog.accept() : dialog.dismiss());
  });
  page.on("request", (request) => {
    if (new URL(request.url()).origin !== origin) w.offOrigin.push(request.url());
  });
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) w.cspViolations.push(message.text());
  });
  return w;
}

async function open(page: Page, root: string, hash: string, selector: string): Promise<number> {
  const start = Date.now();
  await page.goto(`${root}#${hash}`);
  await page.locator(selector).first().waitFor({ state: "visible", timeout: 20_000 });
  return Date.now() - start;
}

/** A frozen remote job, written as a worker would (claim, submitting, freeze). */
async function frozenJob(soniq: Soniq): Promise<string> {
  const id = await soniq.enqueue("media.render", {});
  const backend = await soniq.backend();
  await backend.workerRegister({
    id: "w-remote",
    hostname: "h",
    pid: 1,
    queues: ["remote"],
    concurrency: 1,
  });
  const [job] = await backend.jobClaim({ workerId: "w-remote", queues: ["remote"], limit: 1 });
  const owner = { workerId: "w-remote", claimToken: job?.claimToken as string };
  await backend.submissions.submissionMarkSubmitting({
    jobId: id,
    owner,
    name: "media.render",
    queue: "remote",
  });
  await backend.submissions.submissionFreeze({ jobId: id, owner, reason: "deadline" });
  return id;
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
  describe.skipIf(!backend.available)(`dashboard pages in Chromium › ${backend.kind}`, () => {
    let soniq: Soniq;
    let served: Served;
    let admin: BrowserContext;
    let viewer: BrowserContext;
    let frozen: string;
    const schema = freshSchema("soniq_dash_pages");

    beforeAll(async () => {
      soniq = new Soniq({
        logLevel: "silent",
        ...(backend.kind === "sqlite"
          ? {
              databaseUrl: `sqlite:${join(mkdtempSync(join(tmpdir(), "soniq-dash-")), "db.sqlite")}`,
            }
          : { databaseUrl: TEST_DATABASE_URL, schema }),
      });
      const report = soniq.job({ name: "report.send", handler: async () => "sent" });
      soniq.job({ name: "media.render", queue: "remote", handler: async () => null });
      soniq.job({ name: "bulk.noop", queue: "bulk", handler: async () => null });
      soniq.schedule({
        id: "reports.nightly",
        job: report,
        cron: "30 2 * * *",
        timezone: "Europe/Paris",
        args: {},
      });
      soniq.schedule({ id: "reports.hourly", job: report, every: 3600, args: {} });
      await soniq.setup();
      await soniq.schedules.sync();
      frozen = await frozenJob(soniq);
      served = await serve(
        "fetch",
        createDashboard({
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
        }),
      );
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

    it(`dashboard pages › ${backend.kind} schedules and remote jobs › shown, acted on by an admin, no write button for a viewer`, async () => {
      const view = await viewer.newPage();
      await open(view, served.root, "/schedules", "[data-testid=schedule-row]");
      expect(await view.locator("[data-testid=schedule-row]").count()).toBe(2);
      expect(await view.getByRole("button").count()).toBe(0);
      await open(view, served.root, "/remote", "[data-testid=remote-row]");
      expect(await view.getByRole("button").count()).toBe(0);
      await view.close();

      const page = await admin.newPage();
      const w = watch(page, new URL(served.root).origin);
      // The overview counts the frozen job and links to it.
      let ms = await open(page, served.root, "/", "[data-testid=frozen-count]");
      expect(ms).toBeLessThan(RENDER_BOUND_MS);
      expect(await page.locator("[data-testid=frozen-count]").textContent()).toBe("1 frozen");
      expect(await page.locator("[data-testid=warnings]").textContent()).toContain("frozen");
      await page.locator("[data-testid=frozen-count]").click();
      await page.locator("[data-testid=remote-row]").first().waitFor({ timeout: 10_000 });
      const row = page.locator("[data-testid=remote-row]");
      expect(await row.count()).toBe(1);
      expect(await row.textContent()).toContain(`${frozen}:1`);
      expect(await row.textContent()).toContain("deadline");
      if (SCREENSHOTS && backend.kind === "sqlite") {
        mkdirSync("docs/images", { recursive: true });
        await page.screenshot({ path: "docs/images/dashboard-remote.png", fullPage: false });
      }
      // The job's timeline shows its remote phases.
      await open(page, served.root, `/jobs/${frozen}`, "[data-testid=timeline-remote_frozen]");
      expect(await page.locator("[data-testid=timeline-remote_submitting]").count()).toBe(1);
      // Resolve it from the page: not submitted → released, no longer frozen.
      await open(page, served.root, "/remote?phase=frozen", "[data-testid=remote-row]");
      await page.getByRole("button", { name: "Not submitted" }).click();
      await page.locator("[role=status]").waitFor({ timeout: 10_000 });
      await page
        .locator("[data-testid=remote-row]")
        .first()
        .waitFor({ state: "detached", timeout: 10_000 });
      expect((await soniq.remote.show(frozen)).phase).not.toBe("frozen");

      // Schedules: timing, next runs; pause and run now.
      ms = await open(page, served.root, "/schedules", "[data-testid=schedule-row]");
      expect(ms).toBeLessThan(RENDER_BOUND_MS);
      const nightly = page.locator("[data-testid=schedule-row]", { hasText: "reports.nightly" });
      expect(await nightly.textContent()).toContain("cron 30 2 * * * (Europe/Paris)");
      expect(await nightly.locator("time").count()).toBe(3);
      await nightly.getByRole("button", { name: "Pause" }).click();
      await nightly.getByRole("button", { name: "Resume" }).waitFor({ timeout: 10_000 });
      expect(await nightly.locator("[data-testid=schedule-state]").textContent()).toBe("paused");
      expect((await soniq.schedules.show("reports.nightly")).schedule.paused).toBe(true);
      await nightly.getByRole("button", { name: "Run now" }).click();
      await page.locator("[role=status]", { hasText: "enqueued job" }).waitFor({ timeout: 10_000 });
      await nightly.locator(".badge", { hasText: "enqueued" }).waitFor({ timeout: 10_000 });
      if (SCREENSHOTS && backend.kind === "sqlite") {
        await page.screenshot({ path: "docs/images/dashboard-schedules.png", fullPage: false });
      }
      // The job "Run now" enqueued is due, and no worker runs here: the overview says it waits
      // for a worker that can run it.
      await open(page, served.root, "/", "[data-testid=waiting-for-worker]");
      const waiting = await page.locator("[data-testid=waiting-for-worker]").textContent();
      expect(waiting).toContain("Waiting for a worker that can run it");
      expect(waiting).toContain("report.send");
      expect(waiting).toContain("no_worker_for_queue");
      expect(w.dialogs).toEqual([]);
      expect(w.offOrigin).toEqual([]);
      expect(w.cspViolations).toEqual([]);
      await page.close();
    });

    it.skipIf(backend.kind !== "sqlite")(
      `dashboard pages › ${backend.kind} cancel all ${BULK_JOBS} matching › the progress bar moves through intermediate values, then the totals`,
      async () => {
        for (let i = 0; i < BULK_JOBS; i += 2000) {
          await soniq.enqueueMany(
            Array.from({ length: 2000 }, (_, k) => ({ name: "bulk.noop", args: { i: i + k } })),
          );
        }
        const page = await admin.newPage();
        const w = watch(page, new URL(served.root).origin);
        await open(page, served.root, "/jobs?queue=bulk&status=queued", "text=cancel all matching");
        await page.getByRole("button", { name: "cancel all matching" }).click();
        const seen: string[] = [];
        const final = page.locator("[role=status]", { hasText: "done" });
        const deadline = Date.now() + 120_000;
        while (Date.now() < deadline && (await final.count()) === 0) {
          const text = await page
            .locator("[data-testid=bulk-progress-text]")
            .textContent({ timeout: 50 })
            .catch(() => null);
          if (text && seen[seen.length - 1] !== text) seen.push(text);
        }
        expect(await final.textContent()).toBe(
          `cancel: ${BULK_JOBS} of ${BULK_JOBS} done, 0 skipped`,
        );
        const values = seen.map((t) => Number(/^(\d+) of (\d+)$/.exec(t)?.[1]));
        process.stderr.write(`progress seen: ${seen.join(" | ")}\n`);
        const intermediate = values.filter((v) => v > 0 && v < BULK_JOBS);
        // The page reads the totals every 200 ms; how many reads land inside the run depends on
        // the machine's speed (a 20,000-job cancel on SQLite takes 0.5–3 s here): one running
        // total short of the end shows the bar moving.
        expect(intermediate.length, `progress seen: ${seen.join(" | ")}`).toBeGreaterThanOrEqual(1);
        expect([...values].sort((a, b) => a - b)).toEqual(values);
        expect(seen.every((t) => t.endsWith(` of ${BULK_JOBS}`))).toBe(true);
        expect(await soniq.jobs.count({ queue: "bulk", status: "cancelled" })).toBe(BULK_JOBS);
        expect(w.dialogs).toEqual([`confirm: cancel ${BULK_JOBS} matching jobs?`]);
        expect(w.offOrigin).toEqual([]);
        expect(w.cspViolations).toEqual([]);
        await page.close();
      },
      180_000,
    );
  });
}
