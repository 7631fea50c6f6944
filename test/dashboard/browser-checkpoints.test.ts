/**
 * A job's checkpoint and durable steps on the dashboard's job page, in real Chromium (Debian's
 * `/usr/bin/chromium`, driven by playwright-core), on SQLite and PostgreSQL (docs/checkpoints.md,
 * "Seeing it"): the checkpoint (count, size, state) and the steps with their states, the timeline's
 * `checkpoint` and `step` entries; an admin answers a frozen step from the page ("Run it again",
 * "It happened" with a result typed into the prompt) and clears a checkpoint, each checked in the
 * store; a read-only user sees the same but no write button. No request off the origin, no CSP
 * violation.
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
  dropSchemas,
  freshSchema,
  postgresAvailable,
  TEST_DATABASE_URL,
} from "../helpers/postgres.js";

const CHROMIUM = "/usr/bin/chromium";
const pgAvailable = await postgresAvailable();

/**
 * A job frozen on effect step `charge` (its `prepare` done) with a checkpoint, written as a worker
 * would: claim, two checkpoints, the steps' records, the freeze.
 */
async function frozenStepJob(soniq: Soniq, workerId: string): Promise<string> {
  const id = await soniq.enqueue("order.checkout", {});
  const backend = await soniq.backend();
  await backend.workerRegister({
    id: workerId,
    hostname: "h",
    pid: 1,
    queues: ["default"],
    concurrency: 1,
  });
  const [job] = await backend.jobClaim({ workerId, queues: ["default"], limit: 1 });
  if (job?.id !== id) throw new Error("the job was not claimed");
  const owner = { workerId, claimToken: job.claimToken };
  const t = Date.now();
  await backend.jobCheckpoint({ id, owner, checkpoint: '{"next":30}' });
  await backend.jobCheckpoint({
    id,
    owner,
    checkpoint: '{"next":40}',
    steps: JSON.stringify({ prepare: { s: "done", r: 1, t }, charge: { s: "running", t } }),
  });
  const frozen = await backend.jobFreezeStep({
    id,
    owner,
    steps: JSON.stringify({ prepare: { s: "done", r: 1, t }, charge: { s: "frozen", t: t + 1 } }),
    error: 'frozen: the outcome of effect step "charge" is unknown',
  });
  if (!frozen) throw new Error("not frozen");
  return id;
}

async function openJob(page: Page, root: string, id: string): Promise<void> {
  await page.goto(`${root}#/jobs/${id}`);
  await page.locator("[data-testid=step-charge]").waitFor({ state: "visible", timeout: 20_000 });
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
  describe.skipIf(!backend.available)(`dashboard checkpoints in Chromium › ${backend.kind}`, () => {
    let soniq: Soniq;
    let served: Served;
    let admin: BrowserContext;
    let viewer: BrowserContext;
    const schema = freshSchema("soniq_dash_ckpt");

    beforeAll(async () => {
      soniq = new Soniq({
        logLevel: "silent",
        ...(backend.kind === "sqlite"
          ? {
              databaseUrl: `sqlite:${join(mkdtempSync(join(tmpdir(), "soniq-dash-")), "db.sqlite")}`,
            }
          : { databaseUrl: TEST_DATABASE_URL, schema }),
      });
      soniq.job({ name: "order.checkout", handler: async () => null });
      await soniq.setup();
      served = await serve(
        "fetch",
        createDashboard({
          soniq,
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

    it(`job page › ${backend.kind} checkpoint and steps shown; a frozen step answered (rerun, done) and a checkpoint cleared from the page; none of it for a viewer`, async () => {
      const rerun = await frozenStepJob(soniq, "w-1");
      const happened = await frozenStepJob(soniq, "w-2");

      const view = await viewer.newPage();
      await openJob(view, served.root, rerun);
      expect(await view.locator("[data-testid=step-charge]").textContent()).toContain("frozen");
      expect(await view.getByRole("button").count()).toBe(0);
      await view.close();

      const page = await admin.newPage();
      const origin = new URL(served.root).origin;
      const offOrigin: string[] = [];
      const csp: string[] = [];
      page.on("request", (r) => {
        if (new URL(r.url()).origin !== origin) offOrigin.push(r.url());
      });
      page.on("console", (m) => {
        if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
      });
      page.on("dialog", (dialog) => void dialog.accept('{"id":"ch_1"}'));

      await openJob(page, served.root, rerun);
      expect(await page.locator("[data-testid=checkpoint]").textContent()).toMatch(
        /^2 written; last .+; 11 bytes$/,
      );
      expect(await page.locator("[data-testid=value-state]").textContent()).toContain('"next": 40');
      expect(await page.locator("[data-testid=step-prepare]").textContent()).toContain("done");
      expect(await page.locator("[data-testid=timeline-checkpoint]").textContent()).toContain(
        "last of 2 checkpoints, 11 bytes",
      );
      expect(await page.locator("[data-testid=timeline-step]").count()).toBe(2);
      // Run it again: the step's record is gone, the job due now.
      await page.getByRole("button", { name: "Run it again" }).click();
      await page
        .locator("[role=status]", { hasText: "resolve charge (rerun): ok" })
        .waitFor({ timeout: 10_000 });
      const after = await soniq.jobs.get(rerun);
      expect(after && "steps" in after ? after.steps.map((s) => s.name) : null).toEqual([
        "prepare",
      ]);
      expect(after?.status).toBe("queued");
      await page.locator("[data-testid=timeline-step_resolved]").waitFor({ timeout: 10_000 });
      // Clear the checkpoint of that queued job.
      await page.getByRole("button", { name: "Clear checkpoint" }).click();
      await page
        .locator("[data-testid=checkpoint]")
        .waitFor({ state: "detached", timeout: 10_000 });
      expect(await soniq.jobs.get(rerun)).toMatchObject({ checkpoint: null, steps: [] });

      // It happened, with the result typed into the prompt. Another job's page shows no message
      // of the last job's action (it showed "clear checkpoint: ok", which a wait for "ok" took
      // as this answer's before it was written).
      await openJob(page, served.root, happened);
      expect(await page.locator("[role=status]").count()).toBe(0);
      await page.getByRole("button", { name: "It happened" }).click();
      await page
        .locator("[role=status]", { hasText: "resolve charge (done): ok" })
        .waitFor({ timeout: 10_000 });
      const state = await (await soniq.backend()).jobResumeRead({ id: happened });
      expect(JSON.parse(state?.steps as string).charge).toMatchObject({
        s: "done",
        r: { id: "ch_1" },
      });
      expect(offOrigin).toEqual([]);
      expect(csp).toEqual([]);
      await page.close();
    });
  });
}
