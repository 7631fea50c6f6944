/**
 * README ("Shutdown"): "Library code never calls `process.exit`" — a host that embeds a worker
 * decides when its process ends. This test scans every source file under src/ except the CLI
 * (src/cli/, which owns the process and exits with the documented codes) for any reference to
 * `process.exit` or `process.abort`, however written (`process.exit(`, `process["exit"]`,
 * `process?.exit`), comments excluded.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Every .ts/.tsx file under `dir`, recursively. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(path));
    else if (/\.(ts|tsx|mts|cts)$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** `file`'s text with comments removed (string and template contents kept). */
function withoutComments(file: string): string {
  const text = readFileSync(file, "utf8");
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.JSX, text);
  let out = "";
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    out += scanner.getTokenText();
  }
  return out;
}

it("library code › src/ outside src/cli › never calls process.exit or process.abort", () => {
  const files = sources(join(root, "src")).filter(
    (f) => !relative(root, f).split(/[\\/]/).join("/").startsWith("src/cli/"),
  );
  expect(files.length).toBeGreaterThan(50);
  const offenders = files
    .filter((f) =>
      /process\s*(\?\.|\.|\[\s*["'`])\s*(exit|abort|reallyExit)\b/.test(withoutComments(f)),
    )
    .map((f) => relative(root, f));
  expect(offenders).toEqual([]);
});

it("the scan › sees a call › when one is written", () => {
  // The pattern above must match the forms it claims to; a regression here would blind the test.
  const pattern = /process\s*(\?\.|\.|\[\s*["'`])\s*(exit|abort|reallyExit)\b/;
  for (const form of [
    "process.exit(1)",
    'process["exit"](1)',
    "process?.exit()",
    "process.abort()",
  ])
    expect(form).toMatch(pattern);
  expect("process.exitCode = 1").not.toMatch(pattern);
});
