/**
 * The parent side of the worker-process protocol (see ./protocol.ts): spawns a worker process,
 * follows its report lines, reads its peak RSS and times SIGTERM → exit.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { REPO_ROOT } from "../adapters/support.js";
import type { WorkerProcessSpec } from "../adapters/types.js";

export class WorkerProcess {
  readonly child: ChildProcess;
  /** Job numbers reported started (`S` lines), with the parent's clock at the report. */
  readonly started = new Map<number, number>();
  /** Highest `N` count seen. */
  finished = 0;
  private readonly waiters = new Set<() => void>();
  private stderrTail = "";
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;

  constructor(spec: WorkerProcessSpec) {
    this.child = spawn(spec.command, spec.args, {
      cwd: REPO_ROOT,
      env: { ...process.env, ...spec.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.exited = new Promise((resolve) => {
      this.child.once("exit", (code, signal) => {
        resolve({ code, signal, at: performance.now() });
        this.notify();
      });
    });
    let buffer = "";
    this.child.stdout?.setEncoding("utf8");
    this.child.stdout?.on("data", (chunk: string) => {
      const now = performance.now();
      buffer += chunk;
      let nl = buffer.indexOf("\n");
      while (nl >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const [tag, value] = line.split(" ");
        if (tag === "S") this.started.set(Number(value), now);
        else if (tag === "N") this.finished = Math.max(this.finished, Number(value));
        nl = buffer.indexOf("\n");
      }
      this.notify();
    });
    this.child.stderr?.setEncoding("utf8");
    this.child.stderr?.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-4000);
    });
  }

  private notify(): void {
    for (const waiter of this.waiters) waiter();
  }

  /** Resolves when `condition()` holds; false after `timeoutMs` or when the process exited. */
  waitFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
    if (condition()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(ok);
      };
      const check = () => {
        if (condition()) done(true);
        else if (this.child.exitCode !== null || this.child.signalCode !== null) done(false);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(check);
    });
  }

  /** Peak resident set size so far, in MiB (VmHWM of /proc/<pid>/status); undefined once exited. */
  peakRssMiB(): number | undefined {
    let status: string;
    try {
      status = readFileSync(`/proc/${this.child.pid}/status`, "utf8");
    } catch {
      return undefined;
    }
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) / 1024 : undefined;
  }

  /** Sends SIGTERM; resolves with milliseconds until the process exited. */
  async terminate(
    timeoutMs = 60_000,
  ): Promise<{ ms: number; code: number | null; signal: string | null }> {
    const sent = performance.now();
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return { ms: exit.at - sent, code: exit.code, signal: exit.signal };
  }

  /** Kills the process if it is still running (clean-up after a failure). */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill("SIGKILL");
      await this.exited;
    }
  }

  /** The last lines the process wrote on standard error (for error messages). */
  get stderr(): string {
    return this.stderrTail.trim().split("\n").slice(-8).join("\n");
  }
}
