/**
 * Operations contract: the dead-letter queue through the admin API — list with filters and
 * pages, show, replay one / many / all matching, delete, export, and the retention the pruner
 * applies.
 */
import { describe, expect, it } from "vitest";
import type { Backend } from "../../../src/backends/contract/index.js";
import { overview } from "../../../src/dashboard/overview.js";
import { Pruner } from "../../../src/maintenance/pruner.js";
import { waitFor } from "../../helpers/wait.js";
import type { ContractContext } from "../helpers.js";
import { ownerOf } from "../helpers.js";
import { claimOne, put, soniqOn } from "./admin-helpers.js";

async function bury(b: Backend, queue: string, reason: string, name = "test.job"): Promise<string> {
  const id = await put(b, { queue, name });
  const j = await claimOne(b, "w1", queue);
  await b.jobDeadLetter({
    id: j.id,
    owner: ownerOf(j),
    error: `failed: ${reason}`,
    reason,
    countAttempt: true,
  });
  return id;
}

export function adminDeadLetterCases({ make }: ContractContext): void {
  describe("operations: dead-letter queue", () => {
    it("deadLetters.list › filters and pages › the matching entries, newest first", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      const x = await bury(b, "a", "max_attempts_exceeded");
      await new Promise((r) => setTimeout(r, 3));
      const y = await bury(b, "a", "crash_loop");
      await new Promise((r) => setTimeout(r, 3));
      const z = await bury(b, "b", "unknown_job", "other.job");
      const all = await soniq.deadLetters.list();
      expect(all.deadLetters.map((d) => d.id)).toEqual([z, y, x]);
      expect(
        (await soniq.deadLetters.list({ reason: "crash_loop" })).deadLetters.map((d) => d.id),
      ).toEqual([y]);
      expect((await soniq.deadLetters.list({ queue: "a" })).deadLetters).toHaveLength(2);
      expect(
        (await soniq.deadLetters.list({ name: "other.job" })).deadLetters.map((d) => d.id),
      ).toEqual([z]);
      const page1 = await soniq.deadLetters.list({}, { limit: 2 });
      const page2 = await soniq.deadLetters.list({}, { limit: 2, cursor: page1.nextCursor });
      expect([...page1.deadLetters, ...page2.deadLetters].map((d) => d.id)).toEqual([z, y, x]);
      expect(page2.nextCursor).toBeNull();
      const shown = await soniq.jobs.get(y);
      expect(shown).toMatchObject({ status: "dead_letter", reason: "crash_loop" });
    });

    it("deadLetters.replay / replayMany / delete / export › guarded, counted, timeline noted", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      const one = await bury(b, "a", "max_attempts_exceeded");
      const two = await bury(b, "a", "max_attempts_exceeded");
      const three = await bury(b, "b", "crash_loop");
      expect(await soniq.deadLetters.countByReason()).toEqual({
        max_attempts_exceeded: 2,
        crash_loop: 1,
      });
      const exported = [];
      for await (const entry of soniq.deadLetters.export({ queue: "a" })) exported.push(entry);
      expect(exported.map((e) => e.id).sort()).toEqual([one, two].sort());
      expect(JSON.parse(JSON.stringify(exported[0]))).toMatchObject({ queue: "a", args: {} });

      await soniq.deadLetters.replay(one);
      expect(await b.jobGet({ id: one })).toMatchObject({ status: "queued", attempts: 0 });
      expect((await soniq.jobs.get(one))?.timeline.map((e) => e.kind)).toContain("replayed");
      await expect(soniq.deadLetters.replay(one)).rejects.toMatchObject({ code: "NOT_FOUND" });

      await expect(
        soniq.deadLetters.replayMany({ filter: { queue: "a" }, expectedCount: 2 }),
      ).rejects.toMatchObject({ code: "COUNT_MISMATCH" });
      expect(
        await soniq.deadLetters.replayMany({ filter: { queue: "a" }, expectedCount: 1 }),
      ).toEqual({
        matched: 1,
        done: 1,
        skipped: 0,
        dryRun: false,
      });
      await soniq.deadLetters.delete(three);
      expect(await soniq.deadLetters.count()).toBe(0);
      expect(await soniq.deadLetters.countByReason()).toEqual({});
    });

    it("dashboard overview › dead letters by reason › every reason Soniq writes counted one by one, another version's summed as other", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      await bury(b, "a", "dependency_failed");
      await bury(b, "a", "invalid_result");
      await bury(b, "a", "invalid_result");
      await bury(b, "b", "remote_timeout");
      await bury(b, "b", "a_reason_from_another_version");
      expect((await overview(soniq)).deadLettersByReason).toEqual({
        dependency_failed: 1,
        invalid_result: 2,
        remote_timeout: 1,
        other: 1,
      });
    });

    it("pruner › deadLetterRetention › entries older than it are deleted, newer kept", async () => {
      const b = await make();
      await bury(b, "a", "max_attempts_exceeded");
      await new Promise((r) => setTimeout(r, 1100));
      const fresh = await bury(b, "a", "max_attempts_exceeded");
      const pruner = new Pruner({
        backend: b,
        logger: soniqOn(b).logger,
        deadLetterRetentionSeconds: 1,
      });
      await pruner.start(); // its first tick runs at once
      await waitFor(
        async () => (await b.admin.deadLetterCount({ filter: {} })) === 1,
        5000,
        "the old entry pruned",
      );
      await pruner.stop();
      const left = await b.admin.deadLetterList({ filter: {}, limit: 10 });
      expect(left.items.map((d) => d.id)).toEqual([fresh]);
    });
  });
}
