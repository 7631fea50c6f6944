/**
 * The day's `fdatasync` time, printed at the start of a bench run: a PostgreSQL commit waits for
 * one WAL flush, so pick-up latency and any drain that waits for a commit per slot cycle move with
 * it minute by minute (docs/performance.md, "Reading the CPU rows and the environment lines").
 *
 * With `pg_test_fsync` installed (found under /usr/lib/postgresql/<version>/bin) its first
 * section's `fdatasync` line ("one 8kB write", 1 s) is used and the tool is stopped right after
 * it; otherwise 8 kB writes each followed by `fdatasync()` are timed for one second. Either way the
 * test file lives in the OS temp folder, on the filesystem of PostgreSQL's data directory when it
 * is the same device (which the report says).
 */
import { spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** One `fdatasync` measurement. */
export interface FdatasyncReading {
  /** Microseconds per 8 kB write + fdatasync. */
  micros: number;
  /** How it was measured. */
  how: string;
}

/** The newest pg_test_fsync under /usr/lib/postgresql, if any. */
function findPgTestFsync(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const bin = join(root, v, "bin", "pg_test_fsync");
    if (existsSync(bin)) return bin;
  }
  return undefined;
}

/** Runs pg_test_fsync until its first `fdatasync` line; undefined when that fails. */
function viaPgTestFsync(bin: string, file: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const child = spawn(bin, ["-s", "1", "-f", file], { stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    const timer = setTimeout(() => child.kill("SIGTERM"), 15_000);
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const m = /^\s*fdatasync\s+[\d.]+ ops\/sec\s+(\d+) usecs\/op/m.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        child.kill("SIGTERM");
        resolve(Number(m[1]));
      }
    });
    child.once("error", () => resolve(undefined));
    child.once("close", () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
}

/** 8 kB writes at the start of a file, each followed by fdatasync, for about `ms`. */
function timeOwn(file: string, ms: number): number {
  const fd = openSync(file, "w");
  const block = Buffer.alloc(8192, 1);
  try {
    let n = 0;
    const start = performance.now();
    while (performance.now() - start < ms) {
      writeSync(fd, block, 0, block.length, 0);
      fdatasyncSync(fd);
      n += 1;
    }
    return ((performance.now() - start) * 1000) / n;
  } finally {
    closeSync(fd);
  }
}

/**
 * Measures `fdatasync` now.
 * @param dataDirectory - PostgreSQL's data directory, when known (only its device is compared).
 */
export async function measureFdatasync(dataDirectory?: string): Promise<FdatasyncReading> {
  const dir = mkdtempSync(join(tmpdir(), "soniq-bench-fsync-"));
  const file = join(dir, "probe");
  let where = "the OS temp folder";
  try {
    if (dataDirectory && statSync(dataDirectory).dev === statSync(dir).dev) {
      where = "the OS temp folder, same filesystem as PostgreSQL's data directory";
    }
  } catch {
    // data directory not readable from here: say only where the probe ran
  }
  try {
    const bin = findPgTestFsync();
    const viaTool = bin ? await viaPgTestFsync(bin, file) : undefined;
    if (viaTool !== undefined) {
      return { micros: viaTool, how: `pg_test_fsync (one 8kB write, 1 s) in ${where}` };
    }
    return { micros: timeOwn(file, 1000), how: `8 kB write + fdatasync for 1 s in ${where}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
