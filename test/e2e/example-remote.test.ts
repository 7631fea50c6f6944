/**
 * The newcomer's path through docs/remote-jobs.md ("Try it"): `examples/remote-generation` as a
 * real process, Ctrl-C (SIGINT) while jobs are submitting, then `soniq remote list`, `status` and
 * `resolve` as the doc prints them, then a rerun that finishes every job. The ids the example
 * prints must be the ids the CLI takes.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { childEnv, REPO, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

const MAIN = join(REPO, "examples", "remote-generation", "main.ts");
const TSX = pathToFileURL(join(REPO, "node_modules", "tsx", "dist", "loader.mjs")).href;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** Runs the example in `cwd`; `interrupt` sends SIGINT once `submitting` lines reach it. */
function runExample(cwd: string, env: Record<string, string>, interrupt?: number) {
  const child = spawn(process.execPath, ["--import", TSX, MAIN], {
    cwd,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let sent = false;
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
    const submitting = stderr.split("\n").filter((l) => l.includes("phase submitting")).length;
    if (interrupt !== undefined && !sent && submitting >= interrupt) {
      sent = true;
      setTimeout(() => child.kill("SIGINT"), 300);
    }
  });
  return new Promise<{ code: number | null; stderr: string }>((done) => {
    child.on("exit", (code) => done({ code, stderr }));
  });
}

describe("examples/remote-generation, as docs/remote-jobs.md tells a newcomer", () => {
  it("Ctrl-C mid-submission › list/status/resolve by the printed ids › a rerun finishes all six", async () => {
    const cwd = tempDir("soniq-example-remote-");
    const url = `sqlite:${join(cwd, "remote.db")}`;
    // The operator's own database (exported as the README suggests) is never the example's.
    const appDb = join(cwd, "app.db");
    const env = {
      SONIQ_DATABASE_URL: `sqlite:${appDb}`,
      EXAMPLE_DATABASE_URL: url,
      EXAMPLE_PROVIDER_URL: `http://127.0.0.1:${await freePort()}`,
    };
    const first = await runExample(cwd, env, 4);
    expect(first.stderr).toContain(`database: ${url} (the example's own`);
    expect(existsSync(appDb)).toBe(false);
    expect(first.stderr).toContain("SIGINT: draining");
    expect(first.stderr).toContain("freeze (deadline, was submitting)");
    expect(first.code).toBe(1); // shutdown_timeout: a POST was still unanswered at the deadline

    const list = await runCli(["remote", "list", "--json", "--database-url", url], {});
    expect(list.code, list.stderr).toBe(0);
    const records = JSON.parse(list.stdout) as Array<{ jobId: string; state: string }>;
    const frozen = records.filter((r) => r.state === "frozen");
    expect(frozen.length).toBeGreaterThanOrEqual(1);
    // Every job the example named is one the CLI lists, by its whole id.
    const printed = new Set(
      [...first.stderr.matchAll(/ ([0-9a-f]{8}-[0-9a-f-]{27}) {2}phase /g)].map((m) => m[1]),
    );
    expect(printed.size).toBe(records.length);
    for (const r of records) expect(printed.has(r.jobId)).toBe(true);

    const status = JSON.parse(
      (await runCli(["status", "--json", "--database-url", url], {})).stdout,
    ) as Record<string, number>;
    expect(status.remoteFrozen).toBe(frozen.length);

    const target = frozen[0]?.jobId as string;
    const resolved = await runCli(
      ["remote", "resolve", target, "--not-submitted", "--database-url", url],
      {},
    );
    expect(resolved.code, resolved.stderr).toBe(0);

    const second = await runExample(cwd, env);
    expect(second.code, second.stderr).toBe(0);
    const after = JSON.parse(
      (await runCli(["status", "--json", "--database-url", url], {})).stdout,
    ) as Record<string, number>;
    expect(after).toMatchObject({ done: 6, processing: 0, remoteFrozen: 0, remoteAwaiting: 0 });
  }, 240_000);
});
