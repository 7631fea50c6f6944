/**
 * A bulk action answered in one response (`POST api/jobs/bulk`) over many rows of a SQLite file
 * (whose calls are synchronous) yields to the HTTP server between batches: a read sent while it
 * runs is answered before it ends. And "everything matching" with no rows is a no-op, not an error.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboard } from "../../src/dashboard/index.js";
import { Soniq } from "../../src/index.js";
import { DashboardClient, type Served, serve } from "../helpers/dashboard.js";

const ROWS = 3000;

describe("dashboard › bulk on a SQLite file", () => {
  const soniq = new Soniq({
    databaseUrl: `sqlite:${join(mkdtempSync(join(tmpdir(), "soniq-bulk-")), "db.sqlite")}`,
    logLevel: "silent",
  });
  soniq.job({ name: "bulk.row", handler: async () => null });
  let served: Served;

  beforeAll(async () => {
    await soniq.setup();
    for (let k = 0; k < ROWS / 1000; k++) {
      await soniq.enqueueMany(
        Array.from({ length: 1000 }, (_, i) => ({ name: "bulk.row", args: { i } })),
      );
    }
    served = await serve(
      "fetch",
      createDashboard({ soniq, auth: () => ({ name: "ada" }), access: "all" }),
    );
  }, 60_000);
  afterAll(async () => {
    await served?.close();
    await soniq.close();
  });

  it("dashboard › bulk › everything matching with no rows changes nothing", async () => {
    const client = new DashboardClient(served.root);
    await client.login();
    const none = { name: "bulk.none" };
    const sync = await client.fetch("POST", "api/jobs/bulk", {
      action: "cancel",
      filter: none,
      expectedCount: 0,
    });
    expect(sync.status).toBe(200);
    expect(await sync.json()).toMatchObject({ matched: 0, done: 0, skipped: 0 });
    const live = await client.fetch("POST", "api/operations", {
      target: "jobs",
      action: "cancel",
      filter: none,
      expectedCount: 0,
    });
    expect(live.status).toBe(202);
    expect(((await live.json()) as { operation: { matched: number } }).operation.matched).toBe(0);
  });

  it("dashboard › bulk › a one-response bulk over thousands of rows lets other requests through", async () => {
    const client = new DashboardClient(served.root);
    await client.login();
    const order: string[] = [];
    const bulk = client
      .fetch("POST", "api/jobs/bulk", { action: "cancel", filter: {}, expectedCount: ROWS })
      .then(async (response) => {
        order.push("bulk");
        return (await response.json()) as { done: number };
      });
    // Sent once the bulk has begun its rows (its first batch is under way).
    await new Promise((resolve) => setTimeout(resolve, 100));
    const health = await client.fetch("GET", "api/health/live");
    order.push("health");
    expect(health.status).toBe(200);
    expect((await bulk).done).toBe(ROWS);
    expect(order).toEqual(["health", "bulk"]);
  }, 60_000);
});
