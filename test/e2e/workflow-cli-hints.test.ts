/**
 * Issue 29 items 2 and 8, through the built CLI on a SQLite file and on PostgreSQL: `soniq flows
 * show` given a batch's id refuses with a hint to `soniq batches show` (it used to print the batch
 * as a flow whose root is "gone"); an id argument of 100,000 characters is echoed cut, with its
 * length, in the error (it used to come back whole: a 100 kB line). One argument cannot be 1 MB:
 * Linux caps a single argument at 128 KiB (MAX_ARG_STRLEN).
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { prepared, targets } from "../helpers/e2e-targets.js";

for (const target of targets) {
  describe.skipIf(target.skip)(`workflow and id hints in the CLI › ${target.label}`, () => {
    it("flows show <batch id> › exit 2, INVALID_ARGS naming `soniq batches show`; batches show works", async () => {
      const { env, db } = await prepared(target, { SONIQ_LOG_LEVEL: "warn" });
      const batch = await db.batch({
        jobs: [{ job: "report.send", args: { to: "member" } }],
        onComplete: { job: "report.send", args: { to: "callback" } },
      });
      await db.close();
      const shown = await runCli(["flows", "show", batch.id], env);
      expect(shown.code).toBe(2);
      expect(shown.stderr).toContain("INVALID_ARGS");
      expect(shown.stderr).toContain(`soniq batches show ${batch.id}`);
      expect(shown.stdout).not.toContain("gone");
      const json = await runCli(["flows", "show", batch.id, "--json"], env);
      expect(json.code).toBe(2);
      expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: "INVALID_ARGS" } });
      const asBatch = await runCli(["batches", "show", batch.id], env);
      expect(asBatch.code, asBatch.stderr).toBe(0);
      expect(asBatch.stdout).toContain(`batch ${batch.id}  running`);
    }, 60_000);

    it("flows cancel and batches cancel › what they did, in text; the jobs end cancelled; a batch's id to flows cancel › exit 2 naming `soniq batches cancel`", async () => {
      const { env, db } = await prepared(target, { SONIQ_LOG_LEVEL: "warn" });
      const flow = await db.flow({
        job: "report.send",
        args: { to: "root" },
        children: [
          { job: "report.send", args: { to: "a" } },
          { job: "report.send", args: { to: "b" } },
        ],
      });
      const batch = await db.batch({
        jobs: [{ job: "report.send", args: { to: "member" } }],
        onSuccess: { job: "report.send", args: { to: "callback" } },
        open: true,
      });
      const wrong = await runCli(["flows", "cancel", batch.id], env);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain("INVALID_ARGS");
      expect(wrong.stderr).toContain(`soniq batches cancel ${batch.id}`);
      const flowCancel = await runCli(["flows", "cancel", flow.id], env);
      expect(flowCancel.code, flowCancel.stderr).toBe(0);
      expect(flowCancel.stdout.trim()).toBe(
        `flow ${flow.id}: 3 cancelled, 0 running asked to stop`,
      );
      const batchCancel = await runCli(["batches", "cancel", batch.id], env);
      expect(batchCancel.code, batchCancel.stderr).toBe(0);
      expect(batchCancel.stdout.trim()).toBe(
        `batch ${batch.id}: sealed, 1 cancelled, 0 running asked to stop`,
      );
      const flowView = await db.flows.get(flow.id);
      expect(flowView?.state).toBe("cancelled");
      expect(flowView?.jobs.map((j) => j.state)).toEqual(["cancelled", "cancelled", "cancelled"]);
      const batchView = await db.batches.get(batch.id);
      expect(batchView?.counts).toMatchObject({ total: 1, pending: 0, cancelled: 1 });
      await db.close();
    }, 60_000);

    it("an id of 100,000 characters › exit 2, the error echoes its start and its length, one short line", async () => {
      const { env } = await prepared(target, { SONIQ_LOG_LEVEL: "warn" });
      const huge = `0190${"a".repeat(99_996)}`;
      for (const args of [
        ["jobs", "show", huge],
        ["flows", "show", huge, "--json"],
        ["dlq", "replay", huge],
        ["jobs", "show", `--x${huge}`],
      ]) {
        const r = await runCli(args, env);
        expect(r.code, args[1]).toBe(2);
        const first = r.stderr.split("\n")[0] ?? "";
        expect(first.length, args[1]).toBeLessThan(300);
        expect(first).toMatch(/… \(truncated: 1000\d\d characters\)/);
        expect(r.stdout.length).toBeLessThan(300);
      }
    }, 60_000);
  });
}
