/** describeLoadError: one line naming file, line and cause, and what to change for module-system errors. */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeLoadError, moduleSystemHint } from "../../src/jobs/describe-load-error.js";
import { tempDir } from "../helpers/temp.js";

const LOADER = new URL("../../dist/jobs/import-user-module.js", import.meta.url).href;

/**
 * Writes `text` to a temporary `name` and imports it with the built importUserModule in a plain
 * Node process (vitest transforms what it imports, which changes the errors): its error message.
 */
function loadError(name: string, text: string): { path: string; message: string } {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  const script = `import { importUserModule } from ${JSON.stringify(LOADER)};
try { await importUserModule(${JSON.stringify(path)}); console.log("loaded"); }
catch (err) { console.log(err.message); }`;
  const message = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
  }).trim();
  return { path, message };
}

describe("describeLoadError", () => {
  it("describeLoadError › a JavaScript syntax error (import() gives no location) › names file and line", () => {
    const { path, message } = loadError(
      "bad.mjs",
      "export const a = 1;\n\nexport const b = 1 +;\n",
    );
    expect(message).toMatch(
      new RegExp(
        `^MODULE_LOAD: could not load ${path}:3(:\\d+)?: SyntaxError: Unexpected token ';'$`,
      ),
    );
  });

  it("describeLoadError › an import of a missing package › names the importing line and says to install it", () => {
    const { path, message: text } = loadError(
      "missing.mjs",
      '// a comment\nimport { x } from "no-such-package-soniq-test";\nexport default x;\n',
    );
    expect(text).toContain(`${path}:2: Error [ERR_MODULE_NOT_FOUND]: Cannot find package`);
    expect(text).toContain("npm install no-such-package-soniq-test");
  });

  it("describeLoadError › an error thrown at the module's top level › names its first frame", () => {
    const { path, message } = loadError("throws.mjs", '\n\nthrow new TypeError("boom");\n');
    expect(message).toMatch(
      new RegExp(`^MODULE_LOAD: could not load ${path}:3:\\d+: TypeError: boom$`),
    );
  });

  it("describeLoadError › tsx's TransformError › keeps its location and message on one line", () => {
    const error = Object.assign(
      new Error('Transform failed with 1 error:\n/app/resize.ts:2:20: ERROR: Unexpected ";"'),
      { name: "TransformError" },
    );
    expect(describeLoadError(error, "/app/resize.ts")).toBe(
      '/app/resize.ts:2:20: TransformError: ERROR: Unexpected ";"',
    );
  });

  it("describeLoadError › a non-Error was thrown › still names the file", () => {
    expect(describeLoadError("nope", "file:///app/jobs.mjs")).toBe("/app/jobs.mjs: Error: nope");
  });

  it("moduleSystemHint › CommonJS / ES-module mismatches › say what to change", () => {
    expect(moduleSystemHint("ERR_REQUIRE_ESM", "")).toContain("Node.js >= 20.19");
    expect(moduleSystemHint("ERR_REQUIRE_CYCLE_MODULE", "")).toContain('"type": "module"');
    expect(moduleSystemHint("", "Cannot use import statement outside a module")).toContain(
      '"type": "module"',
    );
    expect(moduleSystemHint("", "require is not defined in ES module scope")).toContain(".cjs");
    expect(moduleSystemHint("ERR_MODULE_NOT_FOUND", "x")).toBeUndefined();
  });
});
