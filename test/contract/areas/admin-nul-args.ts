/**
 * Operations contract: a job whose arguments hold U+0000 (accepted at enqueue) does not break the
 * `args` filter, the filtered count or a filtered bulk action for the other jobs, and can itself be
 * found by its value (issue 26: on PostgreSQL every `args.` filter once failed with 500).
 */
import { describe, expect, it } from "vitest";
import type { JobQuery } from "../../../src/admin/filters.js";
import type { ContractContext } from "../helpers.js";
import { put, soniqOn } from "./admin-helpers.js";

export function adminNulArgsCases({ make }: ContractContext): void {
  describe("operations: arguments holding U+0000", () => {
    it("args filter › one job's arguments hold U+0000 › filters, count and a filtered bulk work; the value matches", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      const nul = await put(b, { queue: "nul", args: '{"note":"a\\u0000b","user":{"id":7}}' });
      const plain = await put(b, { queue: "nul", args: '{"note":"plain","user":{"id":7}}' });
      // An escaped backslash before "u0000" is text, not U+0000.
      const literal = await put(b, { queue: "nul", args: '{"note":"\\\\u0000","user":{"id":8}}' });
      const ids = async (args: NonNullable<JobQuery["args"]>) =>
        (await soniq.jobs.list({ args })).jobs.map((j) => j.id).sort();

      expect(await ids({ path: "user.id", equals: 7 })).toEqual([nul, plain].sort());
      expect(await ids({ path: "note", equals: "plain" })).toEqual([plain]);
      expect(await ids({ path: "note", equals: "a\u0000b" })).toEqual([nul]);
      expect(await ids({ path: "note", equals: "\\u0000" })).toEqual([literal]);
      expect(await soniq.jobs.count({ args: { path: "user.id", equals: 7 } })).toBe(2);
      expect((await soniq.jobs.get(nul))?.args).toEqual({ note: "a\u0000b", user: { id: 7 } });
      expect(
        await soniq.jobs.bulk({
          action: "cancel",
          filter: { args: { path: "user.id", equals: 7 } },
          expectedCount: 2,
        }),
      ).toEqual({ matched: 2, done: 2, skipped: 0, dryRun: false });
      expect((await soniq.jobs.get(literal))?.status).toBe("queued");
      expect(await soniq.jobs.count({ queue: "nul", status: "cancelled" })).toBe(2);
    });

    it("args filter › one job's arguments hold a lone UTF-16 surrogate › filters, count and a filtered bulk work", async () => {
      // Found by the dashboard HTTP fuzz: PostgreSQL's json parser refuses `\ud800` without a low
      // surrogate after it, so every `args.` filter once failed (500) for everyone.
      const b = await make();
      const soniq = soniqOn(b);
      const lone = await put(b, {
        queue: "sur",
        args: '{"note":"x\\ud800y","low":"\\udc00","pair":"\\ud83d\\ude00","user":{"id":7}}',
      });
      const plain = await put(b, { queue: "sur", args: '{"note":"plain","user":{"id":7}}' });
      const ids = async (args: NonNullable<JobQuery["args"]>) =>
        (await soniq.jobs.list({ args })).jobs.map((j) => j.id).sort();
      expect(await ids({ path: "user.id", equals: 7 })).toEqual([lone, plain].sort());
      expect(await ids({ path: "pair", equals: "\ud83d\ude00" })).toEqual([lone]);
      expect(await soniq.jobs.count({ args: { path: "note", equals: "plain" } })).toBe(1);
      expect(
        await soniq.jobs.bulk({
          action: "cancel",
          filter: { args: { path: "user.id", equals: 7 } },
          expectedCount: 2,
        }),
      ).toEqual({ matched: 2, done: 2, skipped: 0, dryRun: false });
    });
  });
}
