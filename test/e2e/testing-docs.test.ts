/**
 * docs/testing.md as a user reads it: its app module and its test file for each runner are written
 * into a fresh app whose `node_modules/soniq` is this checkout (the built `dist/`, through the
 * package's `exports`), and run by vitest, jest (ES modules, as the page says to run it) and
 * `node:test`. Each passes (exit 0); with its first assertion changed to expect an address never
 * enqueued, each fails (exit not 0) with the assertion's message listing what was enqueued.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO } from "../helpers/cli.js";
import { linkedApp } from "../helpers/linked-app.js";
import { removeTempDirs } from "../helpers/temp.js";

afterAll(() => removeTempDirs());

const DOC = readFileSync(join(REPO, "docs", "testing.md"), "utf8");

/** The page's fenced `js` blocks whose first line is `// <file>`, by file name. */
function docFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const match of DOC.matchAll(/```js\n\/\/ ([\w.-]+\.js)\n([\s\S]*?)```/g)) {
    files[match[1] as string] = match[2] as string;
  }
  return files;
}

/** The page's package.json for jest (its one `json` block). */
function jestManifest(): { scripts: { test: string } } & Record<string, unknown> {
  const block = /```json\n([\s\S]*?)```/.exec(DOC);
  if (!block) throw new Error("docs/testing.md has no json block");
  return JSON.parse(block[1] as string);
}

/** This process's environment without vitest's own variables (a runner inside a runner). */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("VITEST") || k.startsWith("SONIQ_") || k === "NODE_OPTIONS") continue;
    if (k === "NODE_ENV" || k === "DATABASE_URL") continue;
    env[k] = v;
  }
  return { ...env, SONIQ_LOG_LEVEL: "error", CI: "true", NO_COLOR: "1", FORCE_COLOR: "0" };
}

interface Runner {
  file: string;
  /** Extra packages the app links from this checkout's node_modules. */
  links: string[];
  /** The app's package.json (beyond the helper's `type: module`), or undefined. */
  manifest?: Record<string, unknown>;
  /** What its output says when the page's three tests passed. */
  passed: RegExp;
  /** The command and arguments, run in the app directory. */
  command: (dir: string) => [string, string[]];
}

const RUNNERS: Record<string, Runner> = {
  vitest: {
    file: "signup.vitest.test.js",
    links: ["vitest"],
    passed: /Tests\s+3 passed \(3\)/,
    command: () => [process.execPath, [join(REPO, "node_modules", "vitest", "vitest.mjs"), "run"]],
  },
  jest: {
    file: "signup.jest.test.js",
    links: ["jest"],
    passed: /Tests:\s+3 passed, 3 total/,
    manifest: jestManifest(),
    // The page's "test" script, as npm would run it.
    command: () => {
      const [node, ...args] = jestManifest().scripts.test.split(" ");
      expect(node).toBe("node");
      return [process.execPath, args];
    },
  },
  "node:test": {
    file: "signup.node.test.js",
    links: [],
    // TAP (Node 20 without a terminal): "# pass 3"; spec (Node 22+): "ℹ pass 3".
    passed: /pass 3\n/,
    command: () => [process.execPath, ["--test"]],
  },
};

/** A fresh app with the page's jobs.js and `runner`'s test file (after `edit`), run once. */
function runDocTests(runner: Runner, edit: (text: string) => string = (t) => t) {
  const files = docFiles();
  const jobs = files["jobs.js"];
  const test = files[runner.file];
  if (jobs === undefined || test === undefined) {
    throw new Error(`docs/testing.md lacks jobs.js or ${runner.file}`);
  }
  const dir = linkedApp({ "jobs.js": jobs, [runner.file]: edit(test) });
  if (runner.manifest) {
    // The helper wrote { "type": "module" }; the page's manifest says that and more.
    const manifest = { name: "app", ...runner.manifest };
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  }
  for (const name of runner.links) {
    symlinkSync(join(REPO, "node_modules", name), join(dir, "node_modules", name), "dir");
  }
  const [file, args] = runner.command(dir);
  const result = spawnSync(file, args, {
    cwd: dir,
    env: cleanEnv(),
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: result.status, output: `${result.stdout}\n${result.stderr}` };
}

/** The first assertion of each page's test, made to expect an address never enqueued. */
function breakFirstAssertion(text: string): string {
  const line = 'await testing.assertEnqueued("email.welcome", { to: "ada@example.com" });';
  expect(text).toContain(line);
  return text.replace(line, line.replace("ada@example.com", "grace@example.com"));
}

describe.each(Object.keys(RUNNERS))("docs/testing.md under %s", (name) => {
  const runner = RUNNERS[name] as Runner;

  it(`${name} › the page's app and test file, against dist/ › passes (exit 0)`, () => {
    const { code, output } = runDocTests(runner);
    expect(code, output).toBe(0);
    expect(output).toMatch(runner.passed);
  }, 180_000);

  it(`${name} › its first assertion expecting an address never enqueued › fails, listing what was enqueued`, () => {
    const { code, output } = runDocTests(runner, breakFirstAssertion);
    expect(code, output).not.toBe(0);
    expect(output).toContain(
      'expected a job "email.welcome" matching {"to":"grace@example.com"} to be enqueued, but none was; the store holds 1 job:',
    );
    expect(output).toContain(
      '- email.welcome {"to":"ada@example.com","source":"web"} [queued, id ',
    );
  }, 180_000);
});
