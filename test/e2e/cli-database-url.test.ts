/**
 * One rule for `--database-url` and `--module` on every command (issue 27): from a module that
 * sets no URL (test/fixtures/e2e-jobs.ts), every command run with `--module` and
 * `--database-url` works on that database — a SQLite file and PostgreSQL (a fresh schema through
 * SONIQ_SCHEMA) — and a module whose own code sets a different URL is refused with exit 2 and an
 * error naming both values.
 */
import { describe, expect, it } from "vitest";
import { runCli, startCli } from "../helpers/cli.js";
import { FIXTURE, inspector, startWorker, targets } from "../helpers/e2e-targets.js";
import { waitFor } from "../helpers/wait.js";

for (const target of targets) {
  describe.skipIf(target.skip)(`--database-url with --module, ${target.label}`, () => {
    it("module sets no URL › every command runs on --database-url's database", async () => {
      const fresh = target.fresh();
      const url = fresh.SONIQ_DATABASE_URL as string;
      // Only the schema reaches the child as a variable; the URL only as the flag.
      const env: Record<string, string> = fresh.SONIQ_SCHEMA
        ? { SONIQ_SCHEMA: fresh.SONIQ_SCHEMA }
        : {};
      const flags = ["--module", FIXTURE, "--database-url", url];
      const ok = async (args: string[]) => {
        const out = await runCli([...args, ...flags], env);
        expect(out.code, `${args.join(" ")}: ${out.stderr}`).toBe(0);
        expect(out.stderr, args.join(" ")).not.toContain("INVALID_OPTION");
        return out;
      };
      const setup = JSON.parse((await ok(["setup", "--json"])).stdout);
      expect(setup).toMatchObject({ ready: true });
      const enqueued = JSON.parse(
        (await ok(["enqueue", "e2e.sleep", "--args", '{"ms":1}', "--json"])).stdout,
      );
      const db = inspector({ ...fresh });
      try {
        expect(await db.getJob(enqueued.id)).toMatchObject({ status: "queued" });
        expect(JSON.parse((await ok(["status", "--json"])).stdout)).toMatchObject({ queued: 1 });
        const listed = JSON.parse((await ok(["jobs", "list", "--json"])).stdout);
        expect(JSON.stringify(listed)).toContain(enqueued.id);
        await ok(["jobs", "show", enqueued.id, "--json"]);
        await ok(["queues", "list", "--json"]);
        await ok(["queues", "pause", "default", "--json"]);
        await ok(["queues", "resume", "default", "--json"]);
        await ok(["queues", "set", "default", "--max-running", "none", "--json"]);
        await ok(["workers", "--json"]);
        await ok(["recover", "--json"]);
        await ok(["dlq", "list", "--json"]);
        await ok(["dlq", "export"]);
        await ok(["remote", "list", "--json"]);
        await ok(["schedules", "list", "--json"]);
        await ok(["schedules", "sync", "--json"]);
        // A job id that is not remote: the store answered (NOT_FOUND), the flags were accepted.
        for (const verb of ["show", "poll-now"]) {
          const out = await runCli(["remote", verb, enqueued.id, "--json", ...flags], env);
          expect(out.stderr).not.toContain("INVALID_OPTION");
          expect(out.stderr).toMatch(/NOT_FOUND|INVALID_STATE/);
        }
        // The positional module still works beside the flag.
        const positional = await runCli(["status", FIXTURE, "--database-url", url, "--json"], env);
        expect(positional.code, positional.stderr).toBe(0);

        const worker = startWorker({ ...env }, ["--database-url", url]);
        await worker.ready;
        await waitFor(
          async () => (await db.getJob(enqueued.id))?.status === "done",
          30_000,
          "the job ran on --database-url's database",
        );
        worker.child.kill("SIGTERM");
        expect((await worker.exited).code).toBe(0);
        await ok(["jobs", "delete", enqueued.id, "--yes", "--json"]);

        const dashboard = startCli(["dashboard", "--port", "0", ...flags], env);
        let stdout = "";
        dashboard.child.stdout?.on("data", (d: Buffer) => {
          stdout += d.toString();
        });
        const address = await waitFor(
          () => /http:\/\/\S+\//.exec(stdout)?.[0] ?? null,
          30_000,
          "the dashboard's URL",
        );
        const page = await fetch(address);
        expect(page.status).toBe(200);
        dashboard.child.kill("SIGTERM");
        expect((await dashboard.exited).code).toBe(0);
      } finally {
        await db.close();
      }
    }, 180_000);
  });
}

describe("--database-url against a module's own URL", () => {
  it("module sets databaseUrl in code › a different --database-url exits 2 naming both", async () => {
    for (const args of [
      ["status", "--json"],
      ["setup"],
      ["queues", "list"],
      ["schedules", "sync"],
    ]) {
      const out = await runCli(
        [
          ...args,
          "--module",
          "test/fixtures/explicit-url-jobs.ts",
          "--database-url",
          "sqlite:./other.db",
        ],
        {},
      );
      expect(out.code, args.join(" ")).toBe(2);
      expect(out.stderr).toContain(
        "INVALID_OPTION: --database-url is sqlite:./other.db, but test/fixtures/explicit-url-jobs.ts sets databaseUrl memory: in its own code",
      );
    }
    const worker = await runCli(
      ["worker", "test/fixtures/explicit-url-jobs.ts", "--database-url", "sqlite:./other.db"],
      {},
    );
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain("sets databaseUrl memory: in its own code");
  }, 120_000);
});
