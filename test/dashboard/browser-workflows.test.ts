/**
 * Flows and batches on the dashboard, in real Chromium (Debian's `/usr/bin/chromium`, driven by
 * playwright-core), on SQLite and PostgreSQL (docs/dashboard.md, docs/workflows.md): the flow page
 * draws the tree with each job's state (a child done, one running, the root waiting, then done);
 * the batch page shows the progress, the counts by outcome and which callbacks fired; a job's page
 * links to its flow or batch. A read-only user sees them (reads need no grant) and no write
 * button; an operator granted `flows.cancel` / `batches.cancel` cancels a running flow and an open
 * batch with their Cancel buttons, and the API answers a batch's id on the flow route (and the
 * reverse) with a 404 that names the right route. No request off the origin, no CSP violation.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboard } from "../../src/dashboard/index.js";
import { Soniq } from "../../src/index.js";
import { DashboardClient, type Served, serve } from "../helpers/dashboard.js";
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

const BACKENDS = [
  { kind: "sqlite", available: true },
  { kind: "postgres", available: pgAvailable },
] as const;

/** The state a tree node of job `id` shows, once it shows `state`. */
async function treeState(page: Page, id: string, state: string): Promise<void> {
  await page
    .locator(`[data-testid=flow-job-${id}][data-state=${state}]`)
    .waitFor({ state: "attached", timeout: 20_000 });
}

for (const backend of BACKENDS) {
  describe.skipIf(!backend.available)(`dashboard workflows in Chromium › ${backend.kind}`, () => {
    let soniq: Soniq;
    let served: Served;
    let viewer: BrowserContext;
    let operator: BrowserContext;
    const schema = freshSchema("soniq_dash_wf");
    const gate = { open: false };

    beforeAll(async () => {
      soniq = new Soniq({
        logLevel: "silent",
        pollInterval: 0.05,
        ...(backend.kind === "sqlite"
          ? {
              databaseUrl: `sqlite:${join(mkdtempSync(join(tmpdir(), "soniq-dash-")), "db.sqlite")}`,
            }
          : { databaseUrl: TEST_DATABASE_URL, schema }),
      });
      await soniq.setup();
      served = await serve(
        "fetch",
        createDashboard({
          soniq,
          auth: (req) => {
            const auth = req.headers.get("authorization");
            if (auth === "Bearer viewer") return { name: "vic" };
            if (auth === "Bearer operator") return { name: "olga" };
            return null;
          },
          access: (user) =>
            user.name === "olga" ? { "flows.cancel": true, "batches.cancel": true } : "read-only",
        }),
      );
      viewer = await browser.newContext({ extraHTTPHeaders: { authorization: "Bearer viewer" } });
      operator = await browser.newContext({
        extraHTTPHeaders: { authorization: "Bearer operator" },
      });
    }, 120_000);

    afterAll(async () => {
      gate.open = true;
      await viewer?.close();
      await operator?.close();
      await served?.close();
      await soniq?.close();
      if (backend.kind === "postgres") await dropSchemas([schema]);
    });

    it(`flow and batch pages › ${backend.kind} tree with states, progress and callbacks fired; job pages link to them`, async () => {
      const quick = soniq.job({ name: "wf.dash.quick", handler: async () => "ok" });
      const slow = soniq.job({
        name: "wf.dash.slow",
        handler: async () => {
          await waitFor(() => gate.open, 60_000);
          return "ok";
        },
      });
      const fails = soniq.job({
        name: "wf.dash.fails",
        maxAttempts: 1,
        handler: async () => {
          throw new Error("no");
        },
      });
      const flow = await soniq.flow({
        job: quick,
        args: { step: "report" },
        children: [
          { job: quick, args: { step: "fetch" } },
          { job: slow, args: { step: "render" }, children: [{ job: quick, args: {} }] },
        ],
      });
      const [root, fetched, rendering, drafted] = flow.ids as [string, string, string, string];
      const batch = await soniq.batch({
        jobs: [
          { job: quick, args: { n: 1 } },
          { job: quick, args: { n: 2 } },
          { job: fails, args: { n: 3 } },
        ],
        onComplete: { job: quick, args: { cb: "complete" } },
        onSuccess: { job: quick, args: { cb: "success" } },
        onFailure: { job: quick, args: { cb: "failure" } },
      });
      const worker = soniq.worker({ concurrency: 4 });
      await worker.start();
      await waitFor(async () => (await soniq.getJob(rendering))?.status === "processing", 20_000);
      await waitFor(async () => (await soniq.batches.get(batch.id))?.state === "finished", 20_000);
      await waitFor(
        async () =>
          (await soniq.batches.get(batch.id))?.callbacks.every(
            (c) => c.state === "done" || c.state === "cancelled",
          ),
        20_000,
      );

      const page = await viewer.newPage();
      const origin = new URL(served.root).origin;
      const offOrigin: string[] = [];
      const csp: string[] = [];
      page.on("request", (r) => {
        if (new URL(r.url()).origin !== origin) offOrigin.push(r.url());
      });
      page.on("console", (m) => {
        if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
      });

      // A child's job page links to its flow; the flow page draws the tree.
      await page.goto(`${served.root}#/jobs/${fetched}`);
      await page.locator("[data-testid=flow-link]").click();
      await page.locator("[data-testid=flow-tree]").waitFor({ timeout: 20_000 });
      expect(page.url()).toContain(`#/flows/${root}`);
      await treeState(page, root, "waiting");
      await treeState(page, fetched, "done");
      await treeState(page, rendering, "processing");
      await treeState(page, drafted, "done");
      // The tree: render's dependency under render, render and fetch under the root.
      expect(
        await page
          .locator(
            `[data-testid=flow-job-${root}] [data-testid=flow-job-${rendering}] [data-testid=flow-job-${drafted}]`,
          )
          .count(),
      ).toBe(1);
      expect(await page.locator(`[data-testid=flow-job-${root}] .name`).first().textContent()).toBe(
        "wf.dash.quick",
      );
      expect(await page.locator("[data-testid=flow-counts]").textContent()).toContain("1 waiting");
      // The running job ends: the page follows (live refresh) to the root done.
      gate.open = true;
      await treeState(page, root, "done");
      expect(await page.locator("[data-testid=flow-counts]").textContent()).toBe("4 done");

      // A member's job page links to its batch; the batch page shows progress and callbacks.
      await page.goto(`${served.root}#/jobs/${batch.ids[0]}`);
      await page.locator("[data-testid=batch-link]").click();
      await page.locator("[data-testid=batch-progress]").waitFor({ timeout: 20_000 });
      expect(page.url()).toContain(`#/batches/${batch.id}`);
      expect(await page.locator("[data-testid=batch-progress]").textContent()).toBe("3 of 3 ended");
      expect(await page.locator("[data-testid=count-done]").textContent()).toBe("2");
      expect(await page.locator("[data-testid=count-dead]").textContent()).toBe("1");
      expect(await page.locator("[data-testid=count-pending]").textContent()).toBe("0");
      expect(await page.locator("[data-testid=count-gone]").textContent()).toBe("0");
      const callback = (role: string) => page.locator(`[data-testid=callback-${role}]`);
      expect(await callback("on_complete").textContent()).toContain("yes");
      expect(await callback("on_failure").textContent()).toContain("yes");
      expect(await callback("on_success").textContent()).toContain("no (cancelled");
      expect(await page.locator(`[data-testid=member-${batch.ids[2]}]`).textContent()).toContain(
        "dead",
      );
      // The dead member links to its dead letter.
      expect(
        await page.locator(`[data-testid=member-${batch.ids[2]}] a`).getAttribute("href"),
      ).toBe(`#/dead-letter/${batch.ids[2]}`);
      // No write buttons anywhere on these pages.
      expect(await page.getByRole("button").count()).toBe(0);
      // An unknown flow: the API's 404 shown, nothing else.
      await page.goto(`${served.root}#/flows/0190a0b0-0000-7000-8000-000000000000`);
      await page.locator("[role=alert]").waitFor({ timeout: 20_000 });
      expect(await page.locator("[role=alert]").textContent()).toContain("no flow");
      expect(offOrigin).toEqual([]);
      expect(csp).toEqual([]);
      await page.close();
      await worker.stop();
    });

    it(`cancel buttons › ${backend.kind} an operator cancels a running flow and an open batch; a read-only user has no button; wrong-kind ids get a 404 naming the right route`, async () => {
      const held = { open: false };
      const hold = soniq.job({
        name: "wf.dash.hold",
        handler: async (_args: Record<string, unknown>, ctx) => {
          await waitFor(() => held.open || ctx.signal.aborted, 60_000);
          return "ok";
        },
      });
      const flow = await soniq.flow({
        job: hold,
        args: { step: "root" },
        children: [{ job: hold, args: { step: "child" } }],
      });
      const [root, child] = flow.ids as [string, string];
      const batch = await soniq.batch({
        jobs: [{ job: hold, args: { n: 1 } }],
        onComplete: { job: hold, args: { cb: "complete" } },
        open: true,
      });
      const worker = soniq.worker({ concurrency: 2 });
      await worker.start();
      try {
        await waitFor(async () => (await soniq.getJob(child))?.status === "processing", 20_000);

        // The read-only user sees the running flow and the open batch without a button.
        const look = await viewer.newPage();
        await look.goto(`${served.root}#/flows/${root}`);
        await treeState(look, child, "processing");
        expect(await look.getByRole("button").count()).toBe(0);
        await look.goto(`${served.root}#/batches/${batch.id}`);
        await look.locator("[data-testid=batch-progress]").waitFor({ timeout: 20_000 });
        expect(await look.getByRole("button").count()).toBe(0);
        await look.close();

        // The API: a viewer's cancel is refused; wrong-kind ids name the right route.
        const api = new DashboardClient(served.root, { authorization: "Bearer operator" });
        await api.login();
        const onFlow = await api.fetch("POST", `api/flows/${batch.id}/cancel`);
        expect(onFlow.status).toBe(404);
        expect(((await onFlow.json()) as { error: { message: string } }).error.message).toContain(
          `api/batches/${batch.id}`,
        );
        const onBatch = await api.fetch("GET", `api/batches/${root}`);
        expect(onBatch.status).toBe(404);
        expect(((await onBatch.json()) as { error: { message: string } }).error.message).toContain(
          `api/flows/${root}`,
        );
        const readOnly = new DashboardClient(served.root, { authorization: "Bearer viewer" });
        await readOnly.login();
        expect((await readOnly.fetch("POST", `api/flows/${root}/cancel`)).status).toBe(403);
        expect((await soniq.getJob(child))?.status).toBe("processing");

        // The operator cancels the flow: the waiting root at once, the running child by request.
        const page = await operator.newPage();
        page.on("dialog", (d) => void d.accept());
        await page.goto(`${served.root}#/flows/${root}`);
        await treeState(page, child, "processing");
        await page.getByRole("button", { name: "Cancel" }).click();
        await page.getByRole("status").waitFor({ timeout: 20_000 });
        expect(await page.getByRole("status").textContent()).toBe(
          "cancel: 1 cancelled, 1 running asked to stop",
        );
        await treeState(page, root, "cancelled");
        await treeState(page, child, "cancelled");

        // The batch: sealed and its member cancelled; the batch finishes, onComplete runs.
        await page.goto(`${served.root}#/batches/${batch.id}`);
        await page.locator("[data-testid=batch-progress]").waitFor({ timeout: 20_000 });
        await page.getByRole("button", { name: "Cancel" }).click();
        await page.getByRole("status").waitFor({ timeout: 20_000 });
        expect(await page.getByRole("status").textContent()).toMatch(
          /^cancel: [01] cancelled, [01] running asked to stop$/,
        );
        await waitFor(
          async () => (await soniq.batches.get(batch.id))?.state === "finished",
          20_000,
        );
        expect((await soniq.batches.get(batch.id))?.counts).toMatchObject({
          total: 1,
          cancelled: 1,
        });
        // A finished batch has no Cancel button.
        await page
          .getByRole("button", { name: "Cancel" })
          .waitFor({ state: "detached", timeout: 20_000 });
        await page.close();
      } finally {
        held.open = true;
        await worker.stop();
      }
    });
  });
}
