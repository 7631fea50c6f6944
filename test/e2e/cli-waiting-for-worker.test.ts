/**
 * Jobs waiting for a worker that can run them on the command line (issue 25 item 3), on a SQLite
 * file and PostgreSQL: with a live worker that knows only `known.job`, a job of another name shows
 * in `soniq status` (text, and `--json` as `waitingForWorker`) and in `soniq jobs list
 * --waiting-for-worker`; `soniq queues set --unclaimable-after` sets and clears the queue's setting.
 */
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { prepared, targets } from "../helpers/e2e-targets.js";
import { removeTempDirs } from "../helpers/temp.js";

afterAll(() => removeTempDirs());

for (const target of targets) {
  describe.skipIf(target.skip)(
    `soniq status / jobs list --waiting-for-worker (${target.label})`,
    () => {
      it("a job no live worker knows › status text and --json, jobs list --waiting-for-worker; queues set --unclaimable-after", async () => {
        const { env, db } = await prepared(target);
        db.job({ name: "known.job", handler: async () => undefined });
        const worker = db.worker();
        await worker.start();
        try {
          const id = await db.enqueue("pdf.render", { page: 1 });
          const known = await db.enqueue("known.job", {});

          const [statusJson, statusText, listJson, listText, plainList] = await Promise.all([
            runCli(["status", "--json"], env),
            runCli(["status"], env),
            runCli(["jobs", "list", "--waiting-for-worker", "--json"], env),
            runCli(["jobs", "list", "--waiting-for-worker"], env),
            runCli(["jobs", "list", "--waiting-for-worker", "--cursor", "x"], env),
          ]);
          expect(statusJson.code, statusJson.stderr).toBe(0);
          expect(JSON.parse(statusJson.stdout).waitingForWorker).toEqual([
            {
              queue: "default",
              name: "pdf.render",
              count: 1,
              oldestAgeSeconds: expect.any(Number),
              reason: "unknown_name",
              versions: [1],
            },
          ]);
          expect(statusText.code, statusText.stderr).toBe(0);
          expect(statusText.stdout).toContain("waiting for a worker that can run it");
          expect(statusText.stdout).toMatch(/default\s+pdf\.render\s+1\s+\d+s\s+unknown_name/);
          expect(listJson.code, listJson.stderr).toBe(0);
          const listed = JSON.parse(listJson.stdout) as { jobs: Array<{ id: string }> };
          expect(listed.jobs.map((j) => j.id)).toEqual([id]);
          expect(listText.stdout).toContain(id);
          expect(listText.stdout).not.toContain(known);
          expect(plainList.code).toBe(2);

          const set = await runCli(
            ["queues", "set", "default", "--unclaimable-after", "3600", "--json"],
            env,
          );
          expect(set.code, set.stderr).toBe(0);
          expect(JSON.parse(set.stdout)).toMatchObject({ name: "default", unclaimableAfter: 3600 });
          const off = await runCli(
            ["queues", "set", "default", "--unclaimable-after", "none"],
            env,
          );
          expect(off.code, off.stderr).toBe(0);
          expect(off.stdout).toContain("unclaimable-after none");
          const neither = await runCli(["queues", "set", "default"], env);
          expect(neither.code).toBe(2);
          // Still queued, untouched: the worker does not know its name.
          expect(await db.getJob(id)).toMatchObject({ status: "queued", attempts: 0 });
        } finally {
          await worker.stop();
          await db.close();
        }
      }, 60_000);
    },
  );
}
