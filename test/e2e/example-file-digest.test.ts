/**
 * The main job on real input: `examples/file-digest` over real files (this repository's
 * node_modules). Ctrl-C (SIGINT) mid-run, then a rerun: every file processed, none run again after
 * it was recorded done, no row left `processing`.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { childEnv, REPO } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

/** Every job, live (`soniq_jobs`) or finished (`soniq_finished_jobs`), as the CTE `jobs`. */
const JOBS = `WITH jobs AS (SELECT id, name, status, args FROM soniq_jobs
  UNION ALL SELECT id, name, status, args FROM soniq_finished_jobs)`;

// A stable part of node_modules (the test runner writes caches elsewhere in it).
const INPUT = resolve(REPO, "node_modules", "zod");

function runExample(
  env: Record<string, string>,
  onStart?: (stop: () => void, log: () => string[]) => void,
) {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "examples/file-digest/main.ts", "--dir", INPUT, "--concurrency", "2"],
    {
      cwd: REPO,
      env: childEnv({ ...env, SONIQ_LOG_LEVEL: "warn" }),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const readLog = () =>
    existsSync(env.EXAMPLE_RUN_LOG as string)
      ? readFileSync(env.EXAMPLE_RUN_LOG as string, "utf8")
          .split("\n")
          .filter(Boolean)
      : [];
  onStart?.(() => child.kill("SIGINT"), readLog);
  return new Promise<{ code: number | null; stdout: string; stderr: string; runs: string[] }>(
    (done) => {
      child.on("exit", (code) =>
        setTimeout(() => done({ code, stdout, stderr, runs: readLog() }), 50),
      );
    },
  );
}

describe("examples/file-digest on real files", () => {
  it("Ctrl-C mid-run, then a rerun: every file done once, nothing redone after done, nothing stranded", async () => {
    const dir = tempDir();
    const dbPath = join(dir, "soniq.db");
    const base = { EXAMPLE_DATABASE_URL: `sqlite:${dbPath}`, EXAMPLE_OUTPUT_DIR: join(dir, "out") };

    const first = await runExample(
      { ...base, EXAMPLE_RUN_LOG: join(dir, "run1.log") },
      (stop, log) => {
        void waitFor(() => log().length >= 150, 60_000, "150 files digested").then(stop);
      },
    );
    expect([0, 1], first.stderr).toContain(first.code);
    expect(first.stderr).toContain("draining");
    expect(first.stdout).toMatch(/Jobs left: +\d+ queued, 0 processing/);

    const db = new Database(dbPath, { readonly: true });
    const doneAfterFirst = new Set(
      (
        db
          .prepare(`${JOBS} SELECT id FROM jobs WHERE status = 'done' AND name = 'files.digest'`)
          .all() as Array<{ id: string }>
      ).map((r) => r.id),
    );
    const leftAfterFirst = (
      db.prepare(`${JOBS} SELECT count(*) AS n FROM jobs WHERE status <> 'done'`).get() as {
        n: number;
      }
    ).n;
    db.close();
    expect(doneAfterFirst.size).toBeGreaterThanOrEqual(150);
    expect(leftAfterFirst).toBeGreaterThan(0); // the interrupt really left work behind

    const second = await runExample({ ...base, EXAMPLE_RUN_LOG: join(dir, "run2.log") });
    expect(second.code, second.stderr).toBe(0);
    expect(second.runs.filter((id) => doneAfterFirst.has(id))).toEqual([]);

    const check = new Database(dbPath, { readonly: true });
    const counts = Object.fromEntries(
      (
        check
          .prepare(`${JOBS} SELECT status, count(*) AS n FROM jobs GROUP BY status`)
          .all() as Array<{ status: string; n: number }>
      ).map((r) => [r.status, r.n]),
    );
    const digests = check
      .prepare(`${JOBS} SELECT args FROM jobs WHERE name = 'files.digest'`)
      .all() as Array<{ args: string }>;
    const dead = (
      check.prepare("SELECT count(*) AS n FROM soniq_dead_letter_jobs").get() as { n: number }
    ).n;
    check.close();
    expect(counts.processing ?? 0).toBe(0);
    expect(counts.queued ?? 0).toBe(0);
    // Every file found has exactly one digest job, and its gzip copy exists.
    const paths = digests.map((d) => (JSON.parse(d.args) as { path: string }).path);
    expect(new Set(paths).size).toBe(paths.length);
    expect(dead).toBe(0);
    for (const path of paths) {
      expect(existsSync(join(dir, "out", `${relative(INPUT, path)}.gz`))).toBe(true);
    }
    // Each job ran once, except those the interrupt NACK'd (run again, never after done).
    const allRuns = [...first.runs, ...second.runs];
    expect(new Set(allRuns).size).toBe(paths.length);
    expect(second.stdout).toContain("Jobs done:");
  }, 240_000);
});
