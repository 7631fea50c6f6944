/**
 * `--json` is honoured on every error path (issue 27 item 2): a usage error commander refuses (an
 * unknown command or option, a bad option value, a missing subcommand or required option) and a
 * failure inside a command (not found, a missing file, an unreachable database) each print exactly
 * one `{"error":{"code","message"}}` document on standard output and exit 2 — through the built
 * CLI. Without `--json` standard output stays empty.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { errorJsonSchema } from "../../src/admin/json/index.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/** A SQLite file nothing set up (the commands below fail before they need tables). */
const env = () => ({ SONIQ_DATABASE_URL: `sqlite:${join(tempDir(), "s.db")}` });

/** Runs `soniq <args> --json`; expects exit 2 and one error document of `code`. */
async function jsonError(args: string[], code: string): Promise<string> {
  const r = await runCli([...args, "--json"], env());
  expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
  const lines = r.stdout.split("\n").filter((l) => l.length > 0);
  expect(lines, r.stdout).toHaveLength(1);
  const doc = errorJsonSchema.parse(JSON.parse(lines[0] as string));
  expect(doc.error.code, r.stdout).toBe(code);
  expect(doc.error.message.length).toBeGreaterThan(0);
  expect(doc.error.message.startsWith(`${code}:`)).toBe(false);
  expect(r.stderr).toContain(code);
  return doc.error.message;
}

describe("cli --json on error paths", () => {
  it("usage errors › unknown command, unknown option, bad value, missing subcommand, missing required option › one error document, exit 2", async () => {
    expect(await jsonError(["nosuch"], "INVALID_INPUT")).toMatch(/unknown command/);
    expect(await jsonError(["status", "--nope"], "INVALID_INPUT")).toMatch(/--nope/);
    expect(await jsonError(["jobs", "list", "--limit", "many"], "INVALID_INPUT")).toMatch(
      /limit must be a number/,
    );
    // A command group has no --json of its own: commander refuses the line, still as JSON.
    expect(await jsonError(["jobs"], "INVALID_INPUT")).toMatch(/subcommand|--json/);
    expect(await jsonError(["schedules", "sync"], "INVALID_INPUT")).toMatch(/--module/);
    expect(await jsonError(["queues", "set", "q"], "INVALID_INPUT")).toMatch(/--max-running/);
  }, 60_000);

  it("failures inside a command › a missing file, bad input, an unreachable database › one error document with its code, exit 2", async () => {
    expect(await jsonError(["check-deploy", "missing.yaml"], "FILE_NOT_FOUND")).toContain(
      "missing.yaml",
    );
    await jsonError(["jobs", "cancel"], "INVALID_INPUT");
    await jsonError(
      ["status", "--database-url", "postgres://postgres@127.0.0.1:1/none"],
      "DATABASE_UNREACHABLE",
    );
    await jsonError(["schedules", "preview", "--cron", "not a cron"], "INVALID_SCHEDULE");
  }, 60_000);

  it("without --json › the same usage error › nothing on standard output, exit 2", async () => {
    const r = await runCli(["status", "--nope"], env());
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("INVALID_INPUT");
  }, 30_000);
});
