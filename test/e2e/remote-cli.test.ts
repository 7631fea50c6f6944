/**
 * `soniq remote list|show|resolve|poll-now` and `soniq status` as real processes on a SQLite file
 * and PostgreSQL: a frozen job is listed, shown, resolved once; bad input (an option where a value
 * belongs, an id that is not a UUID) exits 2 with a code and writes nothing.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { prepared, targets } from "../helpers/e2e-targets.js";

for (const target of targets) {
  describe.skipIf(target.skip)(`soniq remote: ${target.label}`, () => {
    it("remote › a frozen job › listed, shown, resolved once; bad input › exit 2, nothing written", async () => {
      const { env, db } = await prepared(target);
      const id = await db.enqueue("music.generate", {});
      const backend = await db.backend();
      await backend.workerRegister({
        id: "w",
        hostname: "h",
        pid: 1,
        queues: null,
        concurrency: 1,
      });
      const [job] = await backend.jobClaim({ workerId: "w", queues: null, limit: 1 });
      const owner = { workerId: "w", claimToken: job?.claimToken as string };
      await backend.submissions.submissionMarkSubmitting({
        jobId: id,
        owner,
        name: "music.generate",
        queue: "default",
      });
      await backend.submissions.submissionFreeze({ jobId: id, owner, reason: "deadline" });

      const list = await runCli(["remote", "list", "--frozen", "--json"], env);
      expect(list.code, list.stderr).toBe(0);
      expect(JSON.parse(list.stdout)).toMatchObject([
        { jobId: id, state: "frozen", frozenReason: "deadline", idempotencyKey: `${id}:1` },
      ]);
      const text = await runCli(["remote", "list"], env);
      expect(text.stdout).toContain(`${id}  frozen`);
      const status = JSON.parse((await runCli(["status", "--json"], env)).stdout);
      // Reported apart from processing, in the totals and per queue.
      expect(status).toMatchObject({
        processing: 0,
        remoteFrozen: 1,
        remoteAwaiting: 0,
        remoteSubmitting: 0,
      });
      expect(status.queues).toMatchObject([
        { name: "default", processing: 0, remoteFrozen: 1, remoteAccepted: 0, remoteSubmitting: 0 },
      ]);

      const both = await runCli(["remote", "resolve", id, "--not-submitted", "--failed", "x"], env);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain("INVALID_OPTION");
      const badTask = await runCli(["remote", "resolve", id, "--accepted", "x".repeat(300)], env);
      expect(badTask.code).toBe(2);
      expect(badTask.stderr).toContain("INVALID_RESULT");
      // commander would take the next option as the value: refused, not resolved as "--json".
      for (const args of [
        ["--accepted", "--json"],
        ["--accepted", "--not-submitted"],
        ["--failed", "--json"],
        ["--failed", ""],
      ]) {
        const swallowed = await runCli(["remote", "resolve", id, ...args], env);
        expect(swallowed.code, args.join(" ")).toBe(2);
        expect(swallowed.stderr).toContain("INVALID_OPTION");
      }
      expect(await db.remote.show(id)).toMatchObject({ phase: "frozen", taskId: null });
      for (const cmd of [
        ["show", "not-a-uuid"],
        ["resolve", "not-a-uuid", "--not-submitted"],
        ["poll-now", "not-a-uuid"],
      ]) {
        const bad = await runCli(["remote", ...cmd], env);
        expect(bad.code, cmd.join(" ")).toBe(2);
        expect(bad.stderr).toContain("NOT_FOUND");
      }
      expect((await db.remote.show(id)).phase).toBe("frozen");

      const ok = await runCli(["remote", "resolve", id, "--accepted", "tsk_9"], env);
      expect(ok.code, ok.stderr).toBe(0);
      const shown = JSON.parse((await runCli(["remote", "show", id, "--json"], env)).stdout);
      expect(shown).toMatchObject({ phase: "accepted", state: "awaiting", taskId: "tsk_9" });
      const again = await runCli(["remote", "resolve", id, "--not-submitted"], env);
      expect(again.code).toBe(2);
      expect(again.stderr).toContain("INVALID_STATE");
      const poll = await runCli(["remote", "poll-now", id], env);
      expect(poll.code, poll.stderr).toBe(0);
      const missing = await runCli(["remote", "show", "00000000-0000-4000-8000-000000000000"], env);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("NOT_FOUND");
      await db.close();
    }, 180_000);

    it("poll-now › a frozen job whose definition has no reconcile › exit 2 INVALID_STATE naming resolve, nothing written; with reconcile, or an answer stored › due now", async () => {
      const { env, db } = await prepared(target);
      const id = await db.enqueue("music.generate", {});
      const backend = await db.backend();
      await backend.workerRegister({
        id: "w",
        hostname: "h",
        pid: 1,
        queues: null,
        concurrency: 1,
      });
      const [job] = await backend.jobClaim({ workerId: "w", queues: null, limit: 1 });
      const owner = { workerId: "w", claimToken: job?.claimToken as string };
      await backend.submissions.submissionMarkSubmitting({
        jobId: id,
        owner,
        name: "music.generate",
        queue: "default",
      });
      await backend.submissions.submissionFreeze({ jobId: id, owner, reason: "deadline" });
      const before = await db.remote.show(id);

      for (const json of [[], ["--json"]]) {
        const refused = await runCli(
          ["remote", "poll-now", id, "test/fixtures/remote-no-reconcile.ts", ...json],
          env,
        );
        expect(refused.code, refused.stderr).toBe(2);
        expect(refused.stderr).toContain("INVALID_STATE");
        expect(refused.stderr).toContain(`soniq remote resolve ${id}`);
        expect(refused.stdout).not.toContain("due now");
      }
      expect(await db.remote.show(id)).toEqual(before);

      // A definition with reconcile: a worker reconciles it, so it is made due.
      const reconciled = await runCli(
        ["remote", "poll-now", id, "test/fixtures/remote-jobs.ts", "--json"],
        env,
      );
      expect(reconciled.code, reconciled.stderr).toBe(0);
      expect(JSON.parse(reconciled.stdout)).toEqual({ jobId: id, due: "now" });

      // An answer stored for it: any worker defining the job applies it.
      expect(await db.remote.fail({ jobId: id }, "gone")).toBe("stored");
      const answered = await runCli(
        ["remote", "poll-now", id, "test/fixtures/remote-no-reconcile.ts"],
        env,
      );
      expect(answered.code, answered.stderr).toBe(0);
      expect(answered.stdout).toContain(`${id} is due now`);
      await db.close();
    }, 180_000);
  });
}
