// The `soniq` program loads only the module of the command being run, and every command for help,
// the version flag and usage errors: each still answers as before.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, REPO } from "../helpers/cli.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

/** Preload that records the command modules a process loads (test/fixtures). */
const TRACE = fileURLToPath(new URL("../fixtures/trace-command-modules.mjs", import.meta.url));

const COMMANDS = [
  "setup",
  "worker",
  "enqueue",
  "recover",
  "status",
  "jobs",
  "dlq",
  "queues",
  "workers",
  "remote",
  "schedules",
  "flows",
  "batches",
  "check-deploy",
  "dashboard",
];

function soniq(...args: string[]) {
  const run = spawnSync(process.execPath, [CLI, ...args], { cwd: REPO, encoding: "utf8" });
  return { code: run.status, out: run.stdout + run.stderr };
}

/** The command modules `soniq …args` loads, in load order (each once). */
function loadedCommands(...args: string[]): string[] {
  const file = join(tempDir("soniq-cli-trace-"), "loaded.txt");
  const run = spawnSync(process.execPath, ["--import", TRACE, CLI, ...args], {
    cwd: REPO,
    encoding: "utf8",
    env: { ...process.env, TRACE_COMMAND_MODULES: file },
  });
  expect(run.status, run.stderr).toBe(0);
  return [...new Set(readFileSync(file, "utf8").split("\n").filter(Boolean))];
}

describe("soniq program", () => {
  afterAll(removeTempDirs);

  it("one command › only its module is loaded; --help › every command's", () => {
    expect(loadedCommands("worker", "--help")).toEqual(["worker.js"]);
    expect(loadedCommands("check-deploy", "--help")).toEqual(["check-deploy.js"]);
    expect(loadedCommands("--help").sort()).toEqual(COMMANDS.map((c) => `${c}.js`).sort());
  });

  it("--help and help › every command listed, in order", () => {
    for (const args of [["--help"], ["help"]]) {
      const { code, out } = soniq(...args);
      expect(code).toBe(0);
      const at = COMMANDS.map((name) => out.search(new RegExp(`^  ${name}\\b`, "m")));
      expect(at.every((i) => i >= 0)).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
    }
  });

  it("one command › its own help; help <command> › the same", () => {
    for (const name of ["worker", "dashboard", "check-deploy"]) {
      const own = soniq(name, "--help");
      expect(own.code).toBe(0);
      expect(own.out).toContain(`Usage: soniq ${name} `);
      expect(soniq("help", name).out).toBe(own.out);
    }
  });

  it("an unknown command › exit 2, INVALID_INPUT, the commands listed", () => {
    const { code, out } = soniq("nope");
    expect(code).toBe(2);
    expect(out).toContain("soniq: INVALID_INPUT: unknown command 'nope'");
    expect(out).toMatch(/^ {2}dashboard\b/m);
  });
});
