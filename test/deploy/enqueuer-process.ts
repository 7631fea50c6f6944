/**
 * Starts and stops the rolling-deploy enqueuer (test/fixtures/rolling/enqueuer.ts) as a child
 * process running one app version, and keeps the jobs it reported enqueuing, in order.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { childEnv } from "../helpers/cli.js";

/** A running enqueuer. */
export interface EnqueuerProcess {
  child: ChildProcess;
  /** Jobs it has reported so far. */
  count(): number;
  /** `[id, name]` of every job it reported, in enqueue order. */
  enqueued(): Array<[string, string]>;
  /** SIGTERM, then waits (up to `timeoutMs`) for exit code 0; throws otherwise. */
  stop(timeoutMs: number): Promise<void>;
}

/** Spawns `node --import tsx test/fixtures/rolling/enqueuer.ts <appModule>` in `cwd`. */
export function spawnEnqueuer(
  appModule: string,
  env: Record<string, string>,
  cwd: string,
): EnqueuerProcess {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "test/fixtures/rolling/enqueuer.ts", appModule],
    { cwd, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] },
  );
  const jobs: Array<[string, string]> = [];
  let partial = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    const lines = (partial + d.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      const [id, name] = line.split(" ");
      if (id && name) jobs.push([id, name]);
    }
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | string>((resolve) => {
    // `close`: after the exit and the end of its output, so every reported job is in.
    child.on("close", (code, signal) => resolve(code ?? signal ?? "?"));
  });
  return {
    child,
    count: () => {
      if (child.exitCode !== null)
        throw new Error(`enqueuer ${appModule} exited ${child.exitCode}: ${stderr.slice(-1000)}`);
      return jobs.length;
    },
    enqueued: () => jobs,
    async stop(timeoutMs) {
      child.kill("SIGTERM");
      const code = await Promise.race([
        exited,
        new Promise<string>((r) => setTimeout(() => r("timeout"), timeoutMs).unref()),
      ]);
      if (code !== 0)
        throw new Error(`enqueuer ${appModule} stopped with ${code}: ${stderr.slice(-1000)}`);
    },
  };
}
