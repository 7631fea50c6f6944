/**
 * Streams behave in pipes (issue 27): a reader that closes early (`soniq dlq export | head -c
 * 100`, `soniq jobs list --json | head -c 100`) ends the command quietly — exit 0, no EPIPE, no
 * stack trace. Real pipes: the CLI is spawned and the test closes its end of standard output
 * after the first 100 bytes, with far more than a pipe buffer (64 KiB) still to write.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { CLI, childEnv, REPO } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

/** Jobs (and dead letters) to write: 200 × ~2 KiB of arguments ≈ 400 KiB of output. */
const N = 200;
const PADDING = "x".repeat(2000);

/** Runs `soniq <args>`, reads the first 100 bytes of its output, then closes the pipe. */
function headC100(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: REPO,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let head = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    head += d.toString();
    if (head.length >= 100) child.stdout.destroy();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise<{ code: number | null; head: string; stderr: string }>((resolve) => {
    child.on("close", (code) => resolve({ code, head: head.slice(0, 100), stderr }));
  });
}

describe("soniq output into a pipe closed early", () => {
  const url = `sqlite:${join(tempDir(), "pipes.db")}`;
  const env = { SONIQ_DATABASE_URL: url, SONIQ_LOG_LEVEL: "warn" };
  let soniq: Soniq;

  beforeAll(async () => {
    soniq = new Soniq({
      databaseUrl: url,
      env: {},
      logger: pino({ level: "silent" }),
      pollInterval: 0.05,
    });
    soniq.job({
      name: "pipes.fail",
      maxAttempts: 1,
      handler: async () => {
        throw new Error("fails on purpose");
      },
    });
    await soniq.setup();
    await soniq.enqueueMany(
      Array.from({ length: N }, (_, i) => ({ name: "pipes.fail", args: { i, PADDING } })),
    );
    const worker = soniq.worker({ concurrency: 20 });
    await worker.start();
    await waitFor(
      async () => (await soniq.deadLetters.list({}, { limit: 1000 })).deadLetters.length === N,
      60_000,
      "every job dead-lettered",
    );
    await worker.stop();
    await soniq.enqueueMany(
      Array.from({ length: N }, (_, i) => ({ name: "pipes.fail", args: { i, PADDING } })),
    );
  }, 90_000);

  afterAll(async () => {
    await soniq.close();
  });

  for (const args of [
    ["dlq", "export"],
    ["jobs", "list", "--json", "--limit", "1000"],
    ["jobs", "list", "--limit", "1000"],
    ["dlq", "list", "--json", "--limit", "1000"],
  ]) {
    it(`soniq ${args.join(" ")} | head -c 100 › exit 0, no EPIPE, no stack trace`, async () => {
      const out = await headC100(args, env);
      expect(out.head.length).toBe(100);
      expect(out.stderr).not.toMatch(/EPIPE|at .*\.js:\d+|UNEXPECTED/);
      expect(out.code).toBe(0);
    }, 60_000);
  }
});
