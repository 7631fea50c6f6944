/**
 * docs/operations.md ("Errors on the command line"): a bulk action (`--all`) without `--yes` off a
 * terminal is refused with `INVALID_INPUT` and exit 2, touching nothing; `--dry-run` only counts;
 * with `--yes` it runs. The jobs are delayed an hour (status `scheduled`), so nothing runs them.
 * The CLI's standard input here is not a terminal (test/helpers/cli.ts).
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { FIXTURE, inspector, targets } from "../helpers/e2e-targets.js";

for (const target of targets) {
  describe.skipIf(target.skip)(`bulk --all confirmation, ${target.label}`, () => {
    it("jobs cancel --all › no --yes, stdin not a terminal › exit 2 INVALID_INPUT, nothing cancelled; --yes cancels", async () => {
      const env = target.fresh();
      const flags = ["--module", FIXTURE];
      const setup = await runCli(["setup", ...flags], env);
      expect(setup.code, setup.stderr).toBe(0);
      const ids: string[] = [];
      for (let i = 0; i < 2; i += 1) {
        const out = await runCli(
          ["enqueue", "e2e.sleep", "--args", '{"ms":1}', "--delay", "3600", "--json", ...flags],
          env,
        );
        expect(out.code, out.stderr).toBe(0);
        ids.push(JSON.parse(out.stdout).id);
      }
      const db = inspector(env);
      try {
        const refused = await runCli(
          ["jobs", "cancel", "--all", "--status", "scheduled", ...flags],
          env,
        );
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain("INVALID_INPUT");
        expect(refused.stderr).toContain("--yes");
        for (const id of ids) expect((await db.getJob(id))?.status).not.toBe("cancelled");

        const counted = await runCli(
          ["jobs", "cancel", "--all", "--status", "scheduled", "--dry-run", "--json", ...flags],
          env,
        );
        expect(counted.code, counted.stderr).toBe(0);
        expect(JSON.parse(counted.stdout)).toMatchObject({ matched: 2, done: 0, dryRun: true });
        for (const id of ids) expect((await db.getJob(id))?.status).not.toBe("cancelled");

        const done = await runCli(
          ["jobs", "cancel", "--all", "--status", "scheduled", "--yes", "--json", ...flags],
          env,
        );
        expect(done.code, done.stderr).toBe(0);
        expect(JSON.parse(done.stdout)).toMatchObject({ matched: 2, done: 2 });
        for (const id of ids) expect(await db.getJob(id)).toMatchObject({ status: "cancelled" });
      } finally {
        await db.close();
      }
    }, 60_000);
  });
}
