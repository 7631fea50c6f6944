/**
 * docs/operations.md ("Bulk actions"): `--expected-count N` guards a bulk action — a count other
 * than the one matching now exits 2 with `COUNT_MISMATCH` and changes nothing (before any
 * question); the matching count proceeds. With ids, `--dry-run` and `--expected-count` are refused
 * (`INVALID_INPUT`) instead of being ignored. Through the built CLI, on a SQLite file and
 * PostgreSQL. The jobs are delayed an hour (status `scheduled`), so nothing runs them.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { FIXTURE, inspector, targets } from "../helpers/e2e-targets.js";

for (const target of targets) {
  describe.skipIf(target.skip)(`bulk --expected-count, ${target.label}`, () => {
    it("jobs cancel --all › --expected-count off by one › exit 2 COUNT_MISMATCH, nothing cancelled; the right count cancels", async () => {
      const env = target.fresh();
      const flags = ["--module", FIXTURE];
      const setup = await runCli(["setup", ...flags], env);
      expect(setup.code, setup.stderr).toBe(0);
      const db = inspector(env);
      try {
        const ids: string[] = [];
        for (let i = 0; i < 2; i += 1) {
          ids.push(await db.enqueue("e2e.sleep", { ms: 1 }, { delay: 3600 }));
        }
        const statuses = async () =>
          Promise.all(ids.map(async (id) => (await db.getJob(id))?.status));
        // A delayed job's row is `queued` (the `scheduled` filter is derived from its due time).
        const before = await statuses();
        expect(before).toEqual(["queued", "queued"]);

        // Off by one, with --yes: refused before anything changes (the count is checked first).
        const refused = await runCli(
          [
            "jobs",
            "cancel",
            "--all",
            "--status",
            "scheduled",
            "--expected-count",
            "3",
            "--yes",
            "--json",
            ...flags,
          ],
          env,
        );
        expect(refused.code, refused.stderr).toBe(2);
        expect(refused.stderr).toContain("soniq: COUNT_MISMATCH");
        expect(refused.stderr).toMatch(/expected 3 .*but 2 match/);
        expect(JSON.parse(refused.stdout)).toMatchObject({ error: { code: "COUNT_MISMATCH" } });
        expect(await statuses()).toEqual(before);

        // With ids, the guard is refused rather than ignored: nothing is cancelled.
        const withIds = await runCli(
          ["jobs", "cancel", ids[0] as string, "--expected-count", "1", ...flags],
          env,
        );
        expect(withIds.code, withIds.stderr).toBe(2);
        expect(withIds.stderr).toContain("soniq: INVALID_INPUT");
        const dryIds = await runCli(
          ["jobs", "cancel", ids[0] as string, "--dry-run", ...flags],
          env,
        );
        expect(dryIds.code, dryIds.stderr).toBe(2);
        expect(dryIds.stderr).toContain("soniq: INVALID_INPUT");
        expect(await statuses()).toEqual(before);

        // The matching count proceeds.
        const done = await runCli(
          [
            "jobs",
            "cancel",
            "--all",
            "--status",
            "scheduled",
            "--expected-count",
            "2",
            "--yes",
            "--json",
            ...flags,
          ],
          env,
        );
        expect(done.code, done.stderr).toBe(0);
        expect(JSON.parse(done.stdout)).toMatchObject({ matched: 2, done: 2, skipped: 0 });
        expect(await statuses()).toEqual(["cancelled", "cancelled"]);
      } finally {
        await db.close();
      }
    }, 90_000);
  });
}
