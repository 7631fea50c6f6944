/**
 * Scheduled work is visible on the command line (issue 27 item 3): a job delayed to next year
 * reads `scheduled` in `soniq status`, `jobs list` (with its due time in the DUE column, and
 * `--status scheduled` / `--status queued` apart) and `jobs show` ("due in …").
 */
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { runCli } from "../helpers/cli.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

afterAll(() => removeTempDirs());

describe("soniq status / jobs list / jobs show with a delayed job", () => {
  it("a job delayed a year and one due now › scheduled apart from queued, with its due time", async () => {
    const url = `sqlite:${join(tempDir(), "s.db")}`;
    const soniq = new Soniq({ databaseUrl: url, env: {}, logger: pino({ level: "silent" }) });
    soniq.job({ name: "report.send", handler: async () => undefined });
    await soniq.setup();
    const runAt = new Date(Date.now() + 365 * 86_400_000);
    runAt.setUTCMilliseconds(0);
    const later = await soniq.enqueue("report.send", {}, { runAt, queue: "reports" });
    const now = await soniq.enqueue("report.send", {}, { queue: "reports" });
    await soniq.close();
    const env = { SONIQ_DATABASE_URL: url };
    const due = `${runAt.toISOString().slice(0, 19)}Z`;

    const [status, statusJson, list, listScheduled, listQueued, show] = await Promise.all([
      runCli(["status"], env),
      runCli(["status", "--json"], env),
      runCli(["jobs", "list"], env),
      runCli(["jobs", "list", "--status", "scheduled", "--json"], env),
      runCli(["jobs", "list", "--status", "queued", "--json"], env),
      runCli(["jobs", "show", later], env),
    ]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^queued\s+1\n/m);
    expect(status.stdout).toMatch(/^scheduled\s+1 {3}→ soniq jobs list --status scheduled\n/m);
    expect(status.stdout).toMatch(/QUEUED\s+SCHEDULED\s+PROCESSING/);
    expect(status.stdout).toMatch(/reports\s+active\s+1\s+1\s+0/);
    const counts = JSON.parse(statusJson.stdout) as Record<string, unknown>;
    expect(counts).toMatchObject({ queued: 1, scheduled: 1 });

    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/STATUS\s+DUE\s+ATTEMPTS/);
    const row = list.stdout.split("\n").find((l) => l.startsWith(later)) ?? "";
    expect(row).toMatch(new RegExp(`scheduled\\s+in 36[45]d \\(${due}\\)`));
    const nowRow = list.stdout.split("\n").find((l) => l.startsWith(now)) ?? "";
    expect(nowRow).toMatch(/queued\s+(now|\d+s ago)/);

    const ids = (out: string) =>
      (JSON.parse(out) as { jobs: Array<{ id: string; status: string; scheduledAt: string }> })
        .jobs;
    expect(ids(listScheduled.stdout)).toEqual([
      expect.objectContaining({ id: later, status: "scheduled", scheduledAt: runAt.toISOString() }),
    ]);
    expect(ids(listQueued.stdout).map((j) => [j.id, j.status])).toEqual([[now, "queued"]]);

    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^status\s+scheduled$/m);
    expect(show.stdout).toMatch(new RegExp(`^due\\s+in 36[45]d \\(${due}\\)$`, "m"));
  }, 60_000);
});
