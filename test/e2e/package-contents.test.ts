/**
 * The packed tarball is clean (issue 27): it carries LICENSE and every file its `exports` name
 * (JavaScript and types of each entry point), its package.json has no `prepare`
 * (npm 11 asks users to approve install-time scripts) nor the pack hooks, its `engines` is what
 * its native dependency supports, and packing leaves the checkout's package.json as it was; publint
 * and @arethetypeswrong/cli pass on it (`npm run check:package`'s script, issue 31).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO } from "../helpers/cli.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

afterAll(() => removeTempDirs());

describe("npm pack", () => {
  it("pack › the tarball › LICENSE, no prepare/prepack/postpack, engines kept; checkout unchanged", () => {
    const before = readFileSync(join(REPO, "package.json"), "utf8");
    const out = tempDir("soniq-pack-");
    const name = execFileSync("npm", ["pack", "--pack-destination", out], {
      cwd: REPO,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    })
      .trim()
      .split("\n")
      .pop() as string;
    const tarball = join(out, name);
    const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n");
    expect(files).toContain("package/LICENSE");
    const manifest = JSON.parse(
      execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }),
    ) as {
      license: string;
      scripts: Record<string, string>;
      engines: { node: string };
      exports: Record<string, Record<string, string>>;
    };
    // Every entry point (soniq/testing among them) ships its JavaScript and its types.
    expect(Object.keys(manifest.exports)).toContain("./testing");
    for (const [entry, targets] of Object.entries(manifest.exports)) {
      expect(Object.keys(targets), entry).toEqual(["types", "import", "default"]);
      for (const target of Object.values(targets)) {
        expect(files, `${entry} → ${target}`).toContain(`package/${target.slice(2)}`);
      }
    }
    expect(manifest.license).toBe("MIT");
    expect(Object.keys(manifest.scripts)).not.toContain("prepare");
    expect(Object.keys(manifest.scripts)).not.toContain("prepack");
    expect(Object.keys(manifest.scripts)).not.toContain("postpack");
    expect(manifest.engines.node).toBe("^20.19.0 || >=22.12.0");
    const license = execFileSync("tar", ["-xzOf", tarball, "package/LICENSE"], {
      encoding: "utf8",
    });
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} The Soniq authors/);
    expect(readFileSync(join(REPO, "package.json"), "utf8")).toBe(before);
    // publint and attw on this tarball (scripts/check-package.mjs; throws on a non-zero exit).
    execFileSync(process.execPath, ["scripts/check-package.mjs", tarball], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
    });
  }, 120_000);
});
