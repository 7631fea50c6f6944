/**
 * The dashboard on PostgreSQL with one job whose arguments hold U+0000 (accepted at enqueue): the
 * `args.` filter of the list, the filtered count and a filtered bulk action answer 200 with the
 * right rows (issue 26: each was a 500, "\u0000 cannot be converted to text").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboard, type DashboardHandler } from "../../src/dashboard/index.js";
import { Soniq } from "../../src/index.js";
import { availableKinds, useBackends } from "../helpers/test-backends.js";

const available = await availableKinds(["PostgreSQL"]);

describe.skipIf(!available.has("PostgreSQL"))(
  "dashboard › U+0000 in arguments › PostgreSQL",
  () => {
    const stores = useBackends("PostgreSQL", { schemaPrefix: "soniq_dash_nul" });
    let soniq: Soniq;
    let dashboard: DashboardHandler;
    let nul: string;
    let plain: string;
    let other: string;

    beforeAll(async () => {
      soniq = new Soniq({ logLevel: "silent", ...stores.freshAddress() });
      soniq.job({ name: "mail.send", queue: "mail", handler: async () => null });
      await soniq.setup();
      nul = await soniq.enqueue(
        "mail.send",
        { note: "a\u0000b", user: { id: 7 } },
        { delay: 3600 },
      );
      plain = await soniq.enqueue("mail.send", { note: "plain", user: { id: 7 } }, { delay: 3600 });
      other = await soniq.enqueue("mail.send", { user: { id: 8 } }, { delay: 3600 });
      dashboard = createDashboard({ soniq, auth: "none", access: "all", csrf: "none" });
    });
    afterAll(() => soniq.close());

    const get = async (path: string) => {
      const response = await dashboard(new Request(`http://127.0.0.1/${path}`));
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };

    it("dashboard › args. filter, count and filtered bulk › 200 with the matching rows", async () => {
      const list = await get("api/jobs?args.user.id=7");
      expect(list.status).toBe(200);
      expect((list.body.jobs as Array<{ id: string }>).map((j) => j.id).sort()).toEqual(
        [nul, plain].sort(),
      );
      const byValue = await get(`api/jobs?args.note=${encodeURIComponent("a\u0000b")}`);
      expect(byValue.status).toBe(200);
      expect((byValue.body.jobs as Array<{ id: string }>).map((j) => j.id)).toEqual([nul]);
      expect(await get("api/jobs/count?args.user.id=7")).toEqual({
        status: 200,
        body: { count: 2 },
      });

      const bulk = await dashboard(
        new Request("http://127.0.0.1/api/jobs/bulk", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            action: "cancel",
            filter: { "args.user.id": 7 },
            expectedCount: 2,
          }),
        }),
      );
      expect(bulk.status).toBe(200);
      expect(await bulk.json()).toMatchObject({ matched: 2, done: 2, skipped: 0 });
      // Delayed an hour: still waiting, listed as scheduled (queued, not yet due).
      expect((await soniq.jobs.get(other))?.status).toBe("scheduled");
      expect((await soniq.jobs.get(nul))?.status).toBe("cancelled");
    });
  },
);
