/**
 * Every entry point of package.json `exports` loads and has types from both module systems, as an
 * installed app sees it (issue 31): an ES module imports it, a CommonJS module `require()`s it
 * (Node.js ^20.19 / >=22.12 load ES modules with `require`), and TypeScript (`module: node20`)
 * type-checks both an `.mts` and a `.cts` consumer. The packed tarball's publint and attw checks
 * are in package-contents.test.ts.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO } from "../helpers/cli.js";
import { linkedApp } from "../helpers/linked-app.js";
import { removeTempDirs } from "../helpers/temp.js";

afterAll(() => removeTempDirs());

const manifest = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
  exports: Record<string, unknown>;
};
/** "soniq", "soniq/kysely", … */
const specifiers = Object.keys(manifest.exports).map((key) =>
  key === "." ? "soniq" : `soniq/${key.slice(2)}`,
);

describe("package entry points", () => {
  it("entry points › every one, from CommonJS and ESM › loads with exports; tsc (node20) types both", () => {
    const list = JSON.stringify(specifiers);
    const dir = linkedApp(
      {
        "load.cjs": `for (const s of ${list}) console.log(s, Object.keys(require(s)).length);`,
        "load.mjs": `for (const s of ${list}) console.log(s, Object.keys(await import(s)).length);`,
        "consumer.cts": specifiers
          .map((s, i) => `import e${i} = require(${JSON.stringify(s)});\nexport { e${i} };`)
          .join("\n"),
        "consumer.mts": specifiers
          .map((s, i) => `export * as e${i} from ${JSON.stringify(s)};`)
          .join("\n"),
      },
      "commonjs",
    );
    for (const script of ["load.cjs", "load.mjs"]) {
      const out = execFileSync(process.execPath, [script], { cwd: dir, encoding: "utf8" });
      const counts = out
        .trim()
        .split("\n")
        .map((line) => line.split(" "));
      expect(counts.map(([s]) => s)).toEqual(specifiers);
      for (const [, count] of counts) expect(Number(count)).toBeGreaterThan(0);
    }
    execFileSync(
      join(REPO, "node_modules", ".bin", "tsc"),
      [
        "--noEmit",
        "--strict",
        "--module",
        "node20",
        "--skipLibCheck",
        "--types",
        "node",
        "--typeRoots",
        join(REPO, "node_modules", "@types"),
        "consumer.cts",
        "consumer.mts",
      ],
      { cwd: dir, encoding: "utf8" },
    );
  }, 120_000);
});
