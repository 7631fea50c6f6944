/**
 * `soniq dashboard`: binding beyond loopback without credentials exits 2 before listening; on
 * loopback it serves the page read-only; with credentials it answers 401 with a Basic challenge
 * until they are given; SIGTERM ends it with exit 0.
 */
import { mkdtempSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startCli } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

function database(): string {
  return `sqlite:${join(mkdtempSync(join(tmpdir(), "soniq-dash-cli-")), "db.sqlite")}`;
}

/**
 * Starts `soniq dashboard` with `args` and `env` and resolves with the process and the root URL
 * it prints once it listens.
 */
async function startDashboard(args: string[], env: Record<string, string>) {
  const run = startCli(["dashboard", ...args], env);
  let stdout = "";
  run.child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  const root = await waitFor(
    () => /on (http:\S+)/.exec(stdout)?.[1],
    10_000,
    "the dashboard's URL",
  );
  return { run, root };
}

describe("soniq dashboard", () => {
  it("soniq dashboard › --host 0.0.0.0 without credentials › exits 2 and says what to set", async () => {
    const run = startCli(
      ["dashboard", "--host", "0.0.0.0", "--port", "0", "--database-url", database()],
      {},
    );
    const { code, stderr } = await run.exited;
    expect(code).toBe(2);
    expect(stderr).toContain("SONIQ_DASHBOARD_USER");
  });

  it("soniq dashboard › credentials set › 401 with a Basic challenge, then the page; SIGTERM exits 0", async () => {
    const url = database();
    const setup = startCli(["setup", "--database-url", url], {});
    expect((await setup.exited).code).toBe(0);
    const { run, root } = await startDashboard(
      ["--port", "0", "--database-url", url, "--base-path", "/ops/jobs"],
      { SONIQ_DASHBOARD_USER: "ops", SONIQ_DASHBOARD_PASSWORD: "s3cret" },
    );
    expect(root).toMatch(/\/ops\/jobs\/$/);
    const anon = await fetch(root);
    expect(anon.status).toBe(401);
    expect(anon.headers.get("www-authenticate")).toContain("Basic");
    const authorization = `Basic ${Buffer.from("ops:s3cret").toString("base64")}`;
    const page = await fetch(root, { headers: { authorization } });
    expect(page.status).toBe(200);
    const me = (await (await fetch(`${root}api/me`, { headers: { authorization } })).json()) as {
      actions: string[];
    };
    expect(me.actions).toEqual([]);
    run.child.kill("SIGTERM");
    expect((await run.exited).code).toBe(0);
  });

  it("soniq dashboard › loopback without credentials › a rebinding Host refused 403, loopback and --allowed-hosts answered", async () => {
    const url = database();
    expect((await startCli(["setup", "--database-url", url], {}).exited).code).toBe(0);
    const { run, root } = await startDashboard(
      ["--port", "0", "--database-url", url, "--allowed-hosts", "jobs.internal"],
      {},
    );
    const port = new URL(root).port;
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          { host: "127.0.0.1", port, path: "/api/queues", headers: { host } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.end();
      });
    expect(await status(`evil.example:${port}`)).toBe(403);
    expect(await status(`localhost:${port}`)).toBe(200);
    expect(await status(`jobs.internal:${port}`)).toBe(200);
    run.child.kill("SIGTERM");
    expect((await run.exited).code).toBe(0);
  });
});
