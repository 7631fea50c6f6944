// The `soniq` program loads only the module of the command being run, and every command for help,
// the version flag and usage errors: each still answers as before.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CLI, REPO } from "../helpers/cli.js";

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
  "check-deploy",
  "dashboard",
];

function soniq(...args: string[]) {
  const run = spawnSync(process.execPath, [CLI, ...args], { cwd: REPO, encoding: "utf8" });
  return { code: run.status, out: run.stdout + run.stderr };
}

describe("soniq program", () => {
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
