/**
 * `soniq schedules …` as real processes on a SQLite file: sync from a module, list, pause, run
 * now, show (next instants and history), preview, remove, and coded errors with exit code 2.
 */
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { runCli } from "../helpers/cli.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

const MODULE = "test/fixtures/schedule-jobs.ts";
afterAll(() => removeTempDirs());

describe("soniq schedules CLI", () => {
  it("cli › sync, list, pause, run, show, remove › the same rows, --json for scripts", async () => {
    const env = {
      SONIQ_DATABASE_URL: `sqlite:${join(tempDir(), "s.db")}`,
      SONIQ_LOG_LEVEL: "warn",
    };
    expect((await runCli(["setup"], env)).code).toBe(0);
    const sync = await runCli(["schedules", "sync", "--module", MODULE, "--json"], env);
    expect(sync.code, sync.stderr).toBe(0);
    expect(JSON.parse(sync.stdout).created.sort()).toEqual([
      "chaos.every_second",
      "reports.nightly",
    ]);
    // No worker ran it: said so, and no instant in the past is listed as "next".
    const asked = Date.now();
    const fresh = await runCli(["schedules", "show", "chaos.every_second"], env);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stdout).toContain("no worker has run this schedule yet");
    const listed = fresh.stdout.split("history")[0]?.match(/\d{4}-\d\d-\d\dT[\d:.]+Z/g) ?? [];
    for (const instant of listed) expect(Date.parse(instant)).toBeGreaterThanOrEqual(asked - 1000);
    const list = await runCli(["schedules", "list", "--json"], env);
    const rows = JSON.parse(list.stdout) as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.id)).toEqual(["chaos.every_second", "reports.nightly"]);
    expect(rows[1]).toMatchObject({ cron: "30 2 * * *", timezone: "Europe/Paris", paused: false });
    expect((await runCli(["schedules", "pause", "reports.nightly"], env)).code).toBe(0);
    const ran = await runCli(["schedules", "run", "reports.nightly", "--json"], env);
    expect(ran.code, ran.stderr).toBe(0);
    const jobId = JSON.parse(ran.stdout).jobId as string;
    const show = await runCli(
      ["schedules", "show", "reports.nightly", "--json", "--next", "3"],
      env,
    );
    const details = JSON.parse(show.stdout);
    expect(details.paused).toBe(true);
    expect(details.upcoming).toHaveLength(3);
    expect(details.runs[0]).toMatchObject({ outcome: "enqueued", manual: true, jobId });
    expect((await runCli(["schedules", "remove", "chaos.every_second"], env)).code).toBe(0);
    const after = JSON.parse((await runCli(["schedules", "list", "--json"], env)).stdout);
    expect(after.map((r: { id: string }) => r.id)).toEqual(["reports.nightly"]);
  });

  it("cli › preview and bad input › instants as JSON; coded errors exit 2", async () => {
    const env = { SONIQ_DATABASE_URL: `sqlite:${join(tempDir(), "s.db")}` };
    const preview = await runCli(
      [
        "schedules",
        "preview",
        "--cron",
        "0 9 * * *",
        "--tz",
        "Asia/Tokyo",
        "--count",
        "2",
        "--json",
      ],
      env,
    );
    expect(preview.code, preview.stderr).toBe(0);
    const instants = JSON.parse(preview.stdout) as string[];
    expect(instants).toHaveLength(2);
    for (const at of instants) expect(at).toMatch(/T00:00:00\.000Z$/);
    const bad = await runCli(["schedules", "preview", "--cron", "61 * * * *"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/INVALID_SCHEDULE/);
    const zone = await runCli(
      ["schedules", "preview", "--cron", "0 * * * *", "--tz", "Mars/Base"],
      env,
    );
    expect(zone.code).toBe(2);
    expect(zone.stderr).toMatch(/unknown time zone/);
    expect((await runCli(["setup"], env)).code).toBe(0);
    const missing = await runCli(["schedules", "show", "nope"], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/NOT_FOUND/);
  });

  it("cli › pause and resume from another process while a worker runs › its next tick honours them (no cache), no backfill", async () => {
    const url = `sqlite:${join(tempDir(), "s.db")}`;
    const env = { SONIQ_DATABASE_URL: url, SONIQ_LOG_LEVEL: "warn" };
    const soniq = new Soniq({
      databaseUrl: url,
      env: {},
      logger: pino({ level: "silent" }),
      pollInterval: 0.1,
      heartbeatInterval: 0.2,
    });
    await soniq.setup();
    const job = soniq.job({ name: "tick.job", handler: async () => "ok" });
    soniq.schedule({ id: "every.second", job, every: 1, args: {}, history: 1000 });
    const worker = soniq.worker();
    await worker.start();
    const backend = await soniq.backend();
    const runs = async () =>
      (await backend.scheduleRuns({ id: "every.second", limit: 1000 })).reverse();
    await waitFor(async () => (await runs()).length >= 1, 5_000, "a first occurrence");
    expect((await runCli(["schedules", "pause", "every.second"], env)).code).toBe(0);
    const pausedAt = (await backend.now()).getTime();
    await waitFor(
      async () => (await runs()).filter((r) => r.outcome === "paused").length >= 2,
      10_000,
      "paused occurrences",
    );
    expect((await runCli(["schedules", "resume", "every.second"], env)).code).toBe(0);
    const resumedAt = (await backend.now()).getTime();
    await waitFor(
      async () =>
        (await runs()).some((r) => r.outcome === "enqueued" && r.occurrence.getTime() > resumedAt),
      10_000,
      "an occurrence after the resume",
    );
    await worker.stop();
    const all = await runs();
    // Every occurrence strictly inside the pause is recorded paused: none ran, none was backfilled.
    for (const run of all) {
      const at = run.occurrence.getTime();
      if (at > pausedAt + 1000 && at < resumedAt - 1000) expect(run.outcome).toBe("paused");
      if (run.outcome === "enqueued")
        expect(at < pausedAt + 1000 || at > resumedAt - 1000).toBe(true);
    }
    const occurrences = all.map((r) => r.occurrence.getTime());
    expect(new Set(occurrences).size).toBe(occurrences.length);
    await soniq.close();
  }, 40_000);
});
