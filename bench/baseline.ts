/**
 * `--baseline REF`: Soniq as it was at a git ref, built in a temporary folder so that the run
 * can measure it beside this checkout (see docs/performance.md, "Comparing with an earlier
 * commit").
 *
 * The tree at REF comes out of `git archive` (the repository gets no worktree entry). Its
 * dependencies: when its package-lock.json is the one of this checkout, a symlink to this
 * checkout's node_modules (the same packages, nothing to install); otherwise its own
 * `npm ci --prefer-offline`. Then `npm run build`. The adapters load the baseline from its own
 * dist/ (dist/index.js in process, dist/cli/main.js for worker processes) and use only the
 * public API, so an earlier internal layout does not matter.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "./adapters/support.js";

export interface Baseline {
  /** The ref as given on the command line. */
  ref: string;
  /** The commit it names (full id) and its abbreviation, which labels the columns. */
  commit: string;
  short: string;
  /** The built tree: package.json, dist/. */
  root: string;
  /** `version` of its package.json. */
  version: string;
  /** How its dependencies were provided. */
  dependencies: "linked" | "npm ci";
  /** Removes the temporary folder (idempotent). */
  remove(): void;
}

/** Runs a command; resolves with its output, rejects with the output's tail on failure. */
function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-20_000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.once("error", reject);
    child.once("close", (code, signal) => {
      if (code === 0) resolve(output);
      else {
        const tail = output.trim().split("\n").slice(-15).join("\n");
        reject(
          new Error(`${command} ${args.join(" ")} failed (${signal ?? `exit ${code}`})\n${tail}`),
        );
      }
    });
  });
}

function sameFile(a: string, b: string): boolean {
  try {
    return readFileSync(a, "utf8") === readFileSync(b, "utf8");
  } catch {
    return false;
  }
}

/**
 * Extracts, installs and builds Soniq at `ref`. On failure (or Ctrl-C meanwhile) the temporary
 * folder is removed before the error is raised (or the process exits).
 */
export async function buildBaseline(ref: string, log: (line: string) => void): Promise<Baseline> {
  const git = (...args: string[]) => run("git", args, REPO_ROOT).then((out) => out.trim());
  let commit: string;
  try {
    commit = await git("rev-parse", "--verify", "--quiet", `${ref}^{commit}`);
  } catch {
    throw new Error(`--baseline ${ref}: not a commit in ${REPO_ROOT}`);
  }
  const short = await git("rev-parse", "--short", commit);
  const dir = mkdtempSync(join(tmpdir(), "soniq-bench-baseline-"));
  const root = join(dir, `soniq-${short}`);
  const remove = () => rmSync(dir, { recursive: true, force: true });
  const onInterrupt = () => {
    remove();
    process.exit(130);
  };
  process.once("SIGINT", onInterrupt);
  try {
    log(`baseline ${ref} = ${short}: extracting into ${root}`);
    mkdirSync(root);
    const archive = join(dir, "tree.tar");
    await git("archive", "--format=tar", "-o", archive, commit);
    await run("tar", ["-xf", archive, "-C", root], dir);
    rmSync(archive);
    let dependencies: Baseline["dependencies"];
    if (sameFile(join(root, "package-lock.json"), join(REPO_ROOT, "package-lock.json"))) {
      symlinkSync(join(REPO_ROOT, "node_modules"), join(root, "node_modules"), "dir");
      dependencies = "linked";
      log(`baseline ${short}: same package-lock.json, node_modules linked to this checkout's`);
    } else {
      log(`baseline ${short}: package-lock.json differs, npm ci --prefer-offline`);
      await run("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund"], root);
      dependencies = "npm ci";
    }
    log(`baseline ${short}: npm run build`);
    await run("npm", ["run", "build"], root);
    if (
      !existsSync(join(root, "dist", "index.js")) ||
      !existsSync(join(root, "dist", "cli", "main.js"))
    ) {
      throw new Error(`--baseline ${ref}: the build made no dist/index.js or dist/cli/main.js`);
    }
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      version?: string;
    };
    return { ref, commit, short, root, version: pkg.version ?? "unknown", dependencies, remove };
  } catch (err) {
    remove();
    throw err;
  } finally {
    process.removeListener("SIGINT", onInterrupt);
  }
}
