/**
 * A finished job's last progress is not shown as if live (issue 27): `soniq jobs show` labels it
 * "last progress before it became done; not live" and `jobs list` prefixes it "last:", while a
 * processing job's progress is shown plain.
 */
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { runCli } from "../helpers/cli.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

afterAll(() => removeTempDirs());

describe("soniq jobs show on a finished job with progress", () => {
  it("progress reported, then done › show labels it last progress, not live", async () => {
    const url = `sqlite:${join(tempDir(), "p.db")}`;
    const soniq = new Soniq({
      databaseUrl: url,
      env: {},
      logger: pino({ level: "silent" }),
      pollInterval: 0.05,
    });
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    soniq.job({
      name: "progress.tick",
      handler: async (_args: Record<string, never>, ctx) => {
        ctx.progress(0.63, "tick 5");
        await released;
      },
    });
    await soniq.setup();
    const id = await soniq.enqueue("progress.tick", {});
    const worker = soniq.worker({ concurrency: 1 });
    await worker.start();
    try {
      await waitFor(
        async () => {
          const job = await soniq.jobs.get(id);
          return job !== null && "progress" in job ? job.progress : null;
        },
        30_000,
        "the progress stored",
      );
      const live = await runCli(["jobs", "show", id], { SONIQ_DATABASE_URL: url });
      expect(live.stdout).toMatch(/progress\s+63% tick 5\n/);
      release();
      await waitFor(
        async () => (await soniq.jobs.get(id))?.status === "done",
        30_000,
        "the job done",
      );
    } finally {
      release();
      await worker.stop();
    }
    const shown = await runCli(["jobs", "show", id], { SONIQ_DATABASE_URL: url });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(
      "progress    63% tick 5 (last progress before it became done; not live)",
    );
    const listed = await runCli(["jobs", "list"], { SONIQ_DATABASE_URL: url });
    expect(listed.stdout).toContain("last: 63% tick 5");
    await soniq.close();
  }, 90_000);
});
