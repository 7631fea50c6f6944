/**
 * The CLI's output shows bidirectional-control characters as their escapes: a right-to-left
 * override in a job's arguments cannot reorder what the terminal displays, and `--json` still
 * parses to the stored value.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { startCli } from "../helpers/cli.js";

describe("CLI output › bidirectional controls", () => {
  it("soniq jobs show › arguments with U+202E › text shows \\u202E; --json parses to the stored value", async () => {
    const databaseUrl = `sqlite:${join(mkdtempSync(join(tmpdir(), "soniq-bidi-")), "db.sqlite")}`;
    const soniq = new Soniq({ databaseUrl, logLevel: "silent" });
    soniq.job({ name: "mail.send", handler: async () => null });
    await soniq.setup();
    const id = await soniq.enqueue("mail.send", { file: "invoice\u202Egnp.exe" });
    await soniq.close();

    const text = await startCli(["jobs", "show", id, "--database-url", databaseUrl], {}).exited;
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("invoice\\u202Egnp.exe");
    expect(text.stdout).not.toContain("\u202E");

    const json = await startCli(["jobs", "show", id, "--json", "--database-url", databaseUrl], {})
      .exited;
    expect(json.code).toBe(0);
    expect(json.stdout).not.toContain("\u202E");
    expect((JSON.parse(json.stdout) as { args: unknown }).args).toEqual({
      file: "invoice\u202Egnp.exe",
    });
  });
});
