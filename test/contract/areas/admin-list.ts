/** Operations contract: listing jobs with filters and cursor pages; counts per queue × status. */
import { describe, expect, it } from "vitest";
import type { ContractContext } from "../helpers.js";
import { ownerOf } from "../helpers.js";
import { claimOne, put } from "./admin-helpers.js";

export function adminListCases({ make }: ContractContext): void {
  describe("operations: list and filter", () => {
    it("jobList › every filter › only matching rows", async () => {
      const b = await make();
      const a = await put(b, { name: "mail.send", queue: "mail", args: '{"user":{"id":42}}' });
      const c = await put(b, { name: "mail.send", queue: "mail", args: '{"user":{"id":"42"}}' });
      const d = await put(b, { name: "img.resize", queue: "img", dedupKey: "img:7", args: "{}" });
      // One failed attempt on a (retried) and one done job (c).
      const ja = await claimOne(b, "w1", "mail");
      await b.jobRetry({
        id: ja.id,
        owner: ownerOf(ja),
        error: "SMTP 451 try later",
        delaySeconds: 600,
      });
      const jc = await claimOne(b, "w1", "mail");
      // Whichever was claimed first is retried (due in 10 minutes): the other is claimed next.
      expect([ja.id, jc.id].sort()).toEqual([a, c].sort());
      await b.jobComplete({
        id: jc.id,
        owner: ownerOf(jc),
        result: null,
        resultRetentionSeconds: 60,
      });
      const ids = async (filter: Parameters<typeof b.admin.jobList>[0]["filter"]) =>
        (await b.admin.jobList({ filter, limit: 100 })).items.map((j) => j.id).sort();

      expect(await ids({})).toEqual([a, c, d].sort());
      expect(await ids({ queue: ["img"] })).toEqual([d]);
      expect(await ids({ name: ["mail.send"] })).toEqual([a, c].sort());
      expect(await ids({ status: ["done"] })).toEqual([jc.id]);
      expect(await ids({ ids: [d, "not-a-uuid"] })).toEqual([d]);
      expect(await ids({ dedupKey: "img:7" })).toEqual([d]);
      expect(await ids({ errorContains: "SMTP 451" })).toEqual([ja.id]);
      // args path: numbers and strings compare as text.
      expect(await ids({ args: { path: ["user", "id"], value: "42" } })).toEqual([a, c].sort());
      expect(await ids({ args: { path: ["user", "missing"], value: "42" } })).toEqual([]);
      const now = await b.now();
      expect(await ids({ createdBefore: new Date(now.getTime() - 60_000) })).toEqual([]);
      expect(await ids({ createdAfter: new Date(now.getTime() - 60_000) })).toHaveLength(3);
      expect(await ids({ finishedAfter: new Date(now.getTime() - 60_000) })).toEqual([jc.id]);
      expect(await b.admin.jobCount({ filter: { queue: ["mail"] } })).toBe(2);
    });

    it("jobList › cursor pages › every row once, newest first", async () => {
      const b = await make();
      const made: string[] = [];
      for (let i = 0; i < 7; i++) {
        // Distinct creation instants on every engine.
        made.push(await put(b));
        await new Promise((r) => setTimeout(r, 3));
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await b.admin.jobList({ filter: {}, cursor, limit: 3 });
        seen.push(...page.items.map((j) => j.id));
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor !== null);
      expect(pages).toBe(3);
      expect(seen).toEqual([...made].reverse());
      await expect(
        b.admin.jobList({ filter: {}, cursor: "garbage!", limit: 3 }),
      ).rejects.toMatchObject({
        code: "INVALID_OPTION",
      });
    });

    it("jobList › a job with a result › the row carries no result", async () => {
      const b = await make();
      const id = await put(b, { queue: "big", args: '{"n":1}' });
      const job = await claimOne(b, "w1", "big");
      const result = JSON.stringify({ blob: "x".repeat(64 * 1024) });
      await b.jobComplete({ id, owner: ownerOf(job), result, resultRetentionSeconds: 60 });
      const [item] = (await b.admin.jobList({ filter: { queue: ["big"] }, limit: 10 })).items;
      expect(item?.id).toBe(id);
      expect(item?.status).toBe("done");
      // Lists leave the result out (a result may be megabytes; no list shows it) …
      expect(item && "result" in item).toBe(false);
      // … and only the result, the checkpoint and the steps (checkpoints.md: each may be
      // megabytes too): the row is the detail's, field for field.
      const detail = await b.admin.jobDetail({ id });
      expect(detail?.result).toBe(result);
      expect(item && ("checkpoint" in item || "steps" in item)).toBe(false);
      const { result: _r, checkpoint: _c, steps: _s, ...rest } = detail ?? { result: null };
      expect(item).toEqual(rest);
    });

    it("jobCountByQueueStatus › jobs and dead letters › one cell per queue × status", async () => {
      const b = await make();
      await put(b, { queue: "a" });
      await put(b, { queue: "a" });
      await put(b, { queue: "b", maxAttempts: 1 });
      const j = await claimOne(b, "w1", "b");
      await b.jobDeadLetter({
        id: j.id,
        owner: ownerOf(j),
        error: "boom",
        reason: "max_attempts_exceeded",
        countAttempt: true,
      });
      expect(await b.admin.jobCountByQueueStatus({})).toEqual([
        { queue: "a", status: "queued", count: 2 },
        { queue: "b", status: "dead_letter", count: 1 },
      ]);
    });
  });
}
