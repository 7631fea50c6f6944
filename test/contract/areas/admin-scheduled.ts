/**
 * Operations contract: scheduled work is visible (issue 27 item 3) — a queued job not yet due
 * counts and filters as `scheduled`, a due one as `queued`, by the database clock a claim uses.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../../helpers/wait.js";
import type { ContractContext } from "../helpers.js";
import { claimOne, put, soniqOn } from "./admin-helpers.js";

const HOUR_MS = 3_600_000;

export function adminScheduledCases({ make }: ContractContext): void {
  describe("operations: scheduled jobs", () => {
    it("counts and filters › a delayed job › scheduled apart from queued", async () => {
      const b = await make();
      const later = new Date((await b.now()).getTime() + HOUR_MS);
      const first = await put(b, { queue: "s", name: "a.now" });
      const delayed = await put(b, { queue: "s", name: "a.later", runAt: later });
      const other = await put(b, { queue: "t", name: "a.later", delaySeconds: 3600 });
      const second = await put(b, { queue: "s", name: "a.now" });
      // The claim takes the two due jobs of `s` (never the delayed one) …
      await b.workerRegister({ id: "w1", hostname: "h", pid: 1, queues: null, concurrency: 2 });
      const claimed = await b.jobClaim({ workerId: "w1", queues: ["s"], limit: 3 });
      expect(claimed.map((j) => j.id).sort()).toEqual([first, second].sort());
      // … and one more is due now.
      const waiting = await put(b, { queue: "s", name: "a.now" });

      const cells = await b.admin.jobCountByQueueStatus({});
      expect(cells).toEqual([
        { queue: "s", status: "processing", count: 2 },
        { queue: "s", status: "queued", count: 1 },
        { queue: "s", status: "scheduled", count: 1 },
        { queue: "t", status: "scheduled", count: 1 },
      ]);

      const ids = async (filter: Parameters<typeof b.admin.jobList>[0]["filter"]) =>
        (await b.admin.jobList({ filter, limit: 100 })).items.map((j) => j.id).sort();
      expect(await ids({ status: ["scheduled"] })).toEqual([delayed, other].sort());
      expect(await ids({ status: ["queued"] })).toEqual([waiting]);
      expect(await ids({ status: ["queued", "scheduled"] })).toEqual(
        [waiting, delayed, other].sort(),
      );
      expect(await ids({ status: ["scheduled", "processing"], queue: ["s"] })).toEqual(
        [delayed, first, second].sort(),
      );
      // Counts: from the counters (status and queue only) and from the rows (any other filter).
      const count = (filter: Parameters<typeof b.admin.jobCount>[0]["filter"]) =>
        b.admin.jobCount({ filter });
      expect(await count({ status: ["scheduled"] })).toBe(2);
      expect(await count({ status: ["scheduled"], queue: ["s"] })).toBe(1);
      expect(await count({ status: ["queued"] })).toBe(1);
      expect(await count({ status: ["queued", "scheduled"] })).toBe(3);
      expect(await count({ status: ["scheduled"], name: ["a.later"] })).toBe(2);
      expect(await count({ status: ["queued"], name: ["a.later"] })).toBe(0);
      expect(await count({ status: ["scheduled", "done"], queue: ["t"] })).toBe(1);
    });

    it("admin API › a delayed job › reads scheduled with its due time; run now makes it queued", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      const later = new Date((await b.now()).getTime() + HOUR_MS);
      const id = await put(b, { queue: "s", runAt: later });
      const page = await soniq.jobs.list({ status: "scheduled" });
      expect(page.jobs.map((j) => [j.id, j.status, j.scheduledAt.getTime()])).toEqual([
        [id, "scheduled", later.getTime()],
      ]);
      expect(await soniq.jobs.count({ status: "scheduled" })).toBe(1);
      expect(await soniq.jobs.count({ status: "queued" })).toBe(0);
      expect((await soniq.jobs.get(id))?.status).toBe("scheduled");
      await expect(soniq.jobs.count({ status: "later" as "queued" })).rejects.toMatchObject({
        code: "INVALID_OPTION",
      });
      await soniq.jobs.retry(id);
      expect((await soniq.jobs.get(id))?.status).toBe("queued");
      expect(await soniq.jobs.count({ status: "queued" })).toBe(1);
    });

    it("due time › reached › the job counts queued and a claim takes it", async () => {
      const b = await make();
      const id = await put(b, { queue: "soon", delaySeconds: 0.3 });
      // Once a count reads it `queued`, a claim (later, on the same clock) finds it due.
      await waitFor(
        async () => (await b.admin.jobCount({ filter: { status: ["queued"] } })) === 1,
        10_000,
        "the job to become due",
      );
      expect((await claimOne(b, "w2", "soon")).id).toBe(id);
    });
  });
}
