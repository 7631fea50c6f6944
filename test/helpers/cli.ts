import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The built CLI (npm test builds first). */
export const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
export const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** Environment for a child: this process's, minus SONIQ_*, plus `extra`. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("SONIQ_")) env[k] = v;
  return { ...env, SONIQ_LOG_LEVEL: "info", ...extra };
}

export interface Running {
  child: ChildProcess;
  /** Resolves with the exit code (or the signal name) and the output. */
  exited: Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>;
  /** Everything printed to stderr so far. */
  stderr(): string;
}

/** Starts `soniq <args>` in the repository directory. */
export function startCli(args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: REPO,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve) => {
    child.on("exit", (code, signal) => {
      // Let the pipes drain.
      setTimeout(() => resolve({ code, signal, stdout, stderr }), 50);
    });
  });
  return { child, exited, stderr: () => stderr };
}

/** Runs `soniq <args>` to completion. */
export function runCli(args: string[], env: Record<string, string>) {
  return startCli(args, env).exited;
}
