/**
 * The README's "Use it in your app", as a new user does it: `npm pack` the checkout, `npm init -y`
 * a fresh app (CommonJS, and ES module), install the tarball with zod and tsx, write the README's
 * files, and run its commands. Only the npm registry is reachable; `--prefer-offline` installs
 * from npm's cache. better-sqlite3's native build is copied from this checkout instead of being
 * compiled again (minutes on a small machine): same version, same Node.js.
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../helpers/cli.js";
import { readmeBlock, readmeFiles } from "../helpers/readme.js";
import { tempDir } from "../helpers/temp.js";

const NATIVE = join("node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node");

function run(cwd: string, file: string, args: string[], timeout = 60_000) {
  return execFileSync(file, args, {
    cwd,
    encoding: "utf8",
    timeout,
    env: { ...process.env, SONIQ_LOG_LEVEL: "info", npm_config_yes: "true" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** `npx soniq …` in `cwd`: exit code and output, never throws. */
function soniq(cwd: string, args: string[]): { code: number; stdout: string; stderr: string } {
  try {
    const stdout = run(cwd, "npx", ["soniq", ...args]);
    return { code: 0, stdout, stderr: "" };
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    return { code: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

let tarball: string | undefined;
/** The checkout packed once (dist/ is built by `npm test` before vitest runs). */
function pack(): string {
  if (tarball) return tarball;
  const out = tempDir();
  const name = run(REPO, "npm", ["pack", "--ignore-scripts", "--pack-destination", out])
    .trim()
    .split("\n")
    .at(-1) as string;
  tarball = join(out, name);
  return tarball;
}

function freshApp(kind: "commonjs" | "module"): string {
  const dir = tempDir();
  run(dir, "npm", ["init", "-y"]);
  if (kind === "module") run(dir, "npm", ["pkg", "set", "type=module"]);
  run(dir, "npm", [
    "install",
    pack(),
    "zod",
    "tsx",
    "--prefer-offline",
    "--ignore-scripts",
    "--no-audit",
    "--no-fund",
  ]);
  mkdirSync(join(dir, NATIVE, ".."), { recursive: true });
  copyFileSync(join(REPO, NATIVE), join(dir, NATIVE));
  return dir;
}

describe.each(["commonjs", "module"] as const)("a fresh %s app", (kind) => {
  it(`install › the README's example in a ${kind} app › setup, enqueue (tsx and CLI), the worker runs both jobs, a broken thread module exits 2, require/import work`, () => {
    const dir = freshApp(kind);
    const files = readmeFiles("## Use it in your app");
    expect(Object.keys(files).sort()).toEqual(["enqueue.ts", "jobs.ts"]);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);

    expect(soniq(dir, ["setup"]).stdout).toContain("schema ready");
    expect(run(dir, "npx", ["tsx", "enqueue.ts"])).toMatch(/^enqueued [0-9a-f-]{36}$/m);
    const viaCli = soniq(dir, [
      "enqueue",
      "hello.greet",
      "--args",
      '{"name":"Grace"}',
      "--module",
      "./jobs.ts",
    ]);
    expect(viaCli.code).toBe(0);
    // `npx soniq worker` runs until Ctrl-C, which signals the terminal's whole process group: the
    // driver starts it in a group of its own, waits for both jobs, and sends SIGINT to the group.
    const driver = `
      const { spawn } = require("node:child_process");
      const w = spawn("npx", ["soniq", "worker", "./jobs.ts"], { detached: true, stdio: ["ignore", "ignore", "pipe"] });
      const ctrlC = (sig) => { try { process.kill(-w.pid, sig); } catch {} };
      let err = "";
      w.stderr.on("data", (d) => { err += d; if ((err.match(/"job done"/g) || []).length === 2) ctrlC("SIGINT"); });
      const guard = setTimeout(() => ctrlC("SIGKILL"), 30000);
      w.stderr.on("close", () => { clearTimeout(guard); process.stdout.write(JSON.stringify({ err })); });
    `;
    const { err } = JSON.parse(run(dir, "node", ["-e", driver])) as { err: string };
    // "close": every process holding the pipe (npx and the worker under it) has exited.
    // npx itself dies of the SIGINT; the worker under it drains and exits 0.
    expect(err).toMatch(/"exit_reason":"drained","exit_code":0/);
    const status = JSON.parse(soniq(dir, ["status", "--json"]).stdout) as Record<string, number>;
    expect(status).toMatchObject({ done: 2, queued: 0, processing: 0, deadLetter: 0 });

    // The README's sync job, with a handler module that does not compile: exit 2, nothing claimed.
    const continued = readmeBlock("// jobs.ts (continued)");
    expect(continued).toContain("file.digest");
    appendFileSync(join(dir, "jobs.ts"), continued);
    writeFileSync(join(dir, "digest.ts"), "export default function digest() {\n  return 1 +;\n}\n");
    expect(soniq(dir, ["enqueue", "file.digest", "--args", '{"path":"x"}']).code).toBe(0);
    const broken = soniq(dir, ["worker", "./jobs.ts"]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(
      `job file.digest: thread handler could not load ${dir}/digest.ts:2:`,
    );
    const after = JSON.parse(soniq(dir, ["status", "--json"]).stdout) as Record<string, number>;
    expect(after).toMatchObject({ queued: 1, processing: 0, done: 2 });

    const load =
      kind === "commonjs"
        ? `console.log(typeof require("soniq").Soniq)`
        : `import("soniq").then((m) => console.log(typeof m.Soniq))`;
    expect(run(dir, "node", ["-e", load]).trim()).toBe("function");
    // npm install, tsx and three CLI processes: about 30 s alone, 100 s seen with two files in
    // parallel on a loaded 2-core machine; the bound is for a hang, not a speed.
  }, 300_000);
});
