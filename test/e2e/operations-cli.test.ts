/**
 * The operations CLI with real processes, on a SQLite file and on PostgreSQL: after a SIGKILL,
 * `soniq workers --json` reports the worker dead and `soniq recover --json` requeues its job as
 * soon as the worker's own heartbeat timeout has passed, though the CLI's own settings say 30 s;
 * a newcomer finds a dead-lettered job from `soniq status` in two commands and replays it in a
 * third; every failure carries a Soniq error code.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { prepared, startWorker, targets } from "../helpers/e2e-targets.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { POSTGRES_UP } from "../helpers/postgres-suite.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

/** The store only: the CLI below runs with its default settings (heartbeatTimeout 30 s). */
function storeOnly(env: Record<string, string>): Record<string, string> {
  return {
    SONIQ_DATABASE_URL: env.SONIQ_DATABASE_URL as string,
    ...(env.SONIQ_SCHEMA ? { SONIQ_SCHEMA: env.SONIQ_SCHEMA } : {}),
  };
}

for (const target of targets) {
  describe.skipIf(target.skip)(`operations CLI, real processes, ${target.label}`, () => {
    it("SIGKILL a worker › workers reports it dead and recover requeues its job once its own heartbeat timeout passed", async () => {
      const { env, db } = await prepared(target, {
        SONIQ_HEARTBEAT_INTERVAL: "0.2",
        SONIQ_HEARTBEAT_TIMEOUT: "1.5",
      });
      const cli = storeOnly(env);
      const id = await db.enqueue("e2e.sleep", { ms: 60_000 });
      const w = startWorker(env);
      await w.ready;
      await waitFor(async () => (await db.getJob(id))?.status === "processing", 10_000, "claimed");
      const before = JSON.parse((await runCli(["workers", "--json"], cli)).stdout);
      expect(before[0]).toMatchObject({
        live: true,
        shutdownState: "RUNNING",
        heartbeatTimeoutSeconds: 1.5,
        inFlight: [id],
      });
      w.child.kill("SIGKILL");
      await w.exited;
      const killedAt = Date.now();
      const dead = await waitFor(
        async () => {
          const list = JSON.parse((await runCli(["workers", "--json"], cli)).stdout);
          return list[0]?.live === false ? list[0] : null;
        },
        15_000,
        "the worker reported dead",
      );
      // Judged by its own 1.5 s, not the CLI's 30 s.
      expect(Date.now() - killedAt).toBeLessThan(10_000);
      expect(dead).toMatchObject({ shutdownState: "RUNNING", inFlight: [id] });
      const recover = await runCli(["recover", "--json"], cli);
      expect(recover.code, recover.stderr).toBe(0);
      const result = JSON.parse(recover.stdout) as { requeued: Array<{ id: string }> };
      expect(result.requeued.map((j) => j.id)).toEqual([id]);
      // Requeued, attempt not spent (an interruption is charged only where a durable start mark
      // exists: docs/reliability.md).
      expect(await db.getJob(id)).toMatchObject({
        status: "queued",
        attempts: 0,
        workerId: null,
      });
      const shown = JSON.parse((await runCli(["jobs", "show", id, "--json"], cli)).stdout);
      expect(shown.timeline.map((e: { kind: string }) => e.kind)).toContain("recovered");
      await db.close();
    }, 60_000);

    it("newcomer › status shows dead_letter 1 › dlq list finds it › dlq replay puts it back", async () => {
      const { env, db } = await prepared(target);
      const cli = storeOnly(env);
      // No module: the arguments are not checked here; the worker dead-letters them (invalid_args).
      const enq = await runCli(["enqueue", "e2e.strict", "--args", '{"n":"x"}'], cli);
      expect(enq.code, enq.stderr).toBe(0);
      expect(enq.stderr).toContain('on queue "default" with maxAttempts 5');
      const id = enq.stdout.trim();
      const w = startWorker(env);
      await w.ready;
      await waitFor(async () => (await db.getDeadLetter(id)) !== null, 10_000, "dead-lettered");
      w.child.kill("SIGTERM");
      await w.exited;

      const status = await runCli(["status"], cli);
      expect(status.stdout).toMatch(/dead_letter\s+1\s+→ soniq dlq list/);
      const list = await runCli(["dlq", "list"], cli);
      expect(list.stdout).toContain(id);
      expect(list.stdout).toContain("invalid_args");
      const replay = await runCli(["dlq", "replay", id], cli);
      expect(replay.code, replay.stderr).toBe(0);
      expect(await db.getJob(id)).toMatchObject({ status: "queued", attempts: 0 });
      const after = JSON.parse((await runCli(["status", "--json"], cli)).stdout);
      expect(after).toMatchObject({ deadLetter: 0, queued: 1 });
      await db.close();
    }, 60_000);
  });
}

describe("CLI errors carry a Soniq error code", () => {
  it("status --colour --json › JSON only; --colour alone › coloured text", async () => {
    const env = { SONIQ_DATABASE_URL: `sqlite:${join(tempDir(), "c.db")}` };
    expect((await runCli(["setup"], env)).code).toBe(0);
    const json = await runCli(["status", "--colour", "--json"], env);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ total: 0, deadLetter: 0 });
    expect(json.stdout).not.toContain("\u001b[");
    const text = await runCli(["status", "--color"], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("\u001b[32m0 live\u001b[39m");
  }, 60_000);

  it("queues pause on a queue nothing knows › NOT_FOUND, exit 2, did-you-mean; --create configures it", async () => {
    const env = { SONIQ_DATABASE_URL: `sqlite:${join(tempDir(), "q.db")}` };
    expect((await runCli(["setup"], env)).code).toBe(0);
    const enq = await runCli(["enqueue", "a.b", "--queue", "mail"], env);
    expect(enq.code, enq.stderr).toBe(0);
    const typo = await runCli(["queues", "pause", "mial", "--json"], env);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('NOT_FOUND: no queue "mial"');
    expect(typo.stderr).toContain('did you mean "mail"?');
    expect(JSON.parse(typo.stdout).error.code).toBe("NOT_FOUND");
    for (const args of [
      ["queues", "resume", "nosuchqueue"],
      ["queues", "set", "nosuchqueue", "--max-running", "2"],
    ]) {
      const out = await runCli(args, env);
      expect(out.code, args.join(" ")).toBe(2);
      expect(out.stderr).toContain("NOT_FOUND");
    }
    const list = JSON.parse((await runCli(["queues", "list", "--json"], env)).stdout) as Array<{
      name: string;
    }>;
    expect(list.map((q) => q.name)).toEqual(["mail"]);
    const created = await runCli(["queues", "pause", "later", "--create", "--json"], env);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ name: "later", paused: true });
    const known = await runCli(["queues", "pause", "mail"], env);
    expect(known.code, known.stderr).toBe(0);
    // The text list shows each setting: maxRunning and unclaimableAfter (seconds).
    const set = await runCli(["queues", "set", "mail", "--unclaimable-after", "600"], env);
    expect(set.code, set.stderr).toBe(0);
    const text = await runCli(["queues", "list"], env);
    expect(text.stdout).toMatch(/QUEUE\s+STATE\s+MAX RUNNING\s+UNCLAIMABLE AFTER\s+QUEUED/);
    expect(text.stdout).toMatch(/mail\s+paused\s+-\s+600 s\s+1\s/);
  }, 60_000);

  it("bad --args file, invalid JSON, a file that is not a SQLite database", async () => {
    const dir = tempDir();
    const notDb = join(dir, "notes.db");
    writeFileSync(notDb, "these are my notes, not a database\n".repeat(100));
    const missing = await runCli(["enqueue", "a.b", "--args", `@${join(dir, "nope.json")}`], {
      SONIQ_DATABASE_URL: `sqlite:${join(dir, "x.db")}`,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/INVALID_INPUT: cannot read --args from .*nope\.json/);
    const invalid = await runCli(["enqueue", "a.b", "--args", "{nope"], {
      SONIQ_DATABASE_URL: `sqlite:${join(dir, "x.db")}`,
    });
    expect(invalid.stderr).toContain("INVALID_INPUT: --args is not valid JSON");
    const notSqlite = await runCli(["status", "--json", "--database-url", `sqlite:${notDb}`], {});
    expect(notSqlite.code).toBe(2);
    expect(notSqlite.stderr).toContain(`NOT_A_DATABASE: ${notDb} is not a SQLite database`);
    expect(JSON.parse(notSqlite.stdout)).toMatchObject({ error: { code: "NOT_A_DATABASE" } });
    const usage = await runCli(["jobs", "list", "--limit", "many"], {
      SONIQ_DATABASE_URL: "memory:",
    });
    expect(usage.stderr).toContain("INVALID_INPUT");
  });

  it.skipIf(!POSTGRES_UP)("refused connection, missing database, missing role", async () => {
    const refused = await runCli(
      ["status", "--database-url", "postgres://postgres@127.0.0.1:1/x"],
      {},
    );
    expect(refused.stderr).toContain("DATABASE_UNREACHABLE");
    const url = new URL(TEST_DATABASE_URL);
    url.pathname = "/soniq_no_such_database";
    const noDb = await runCli(["status", "--database-url", url.toString()], {});
    expect(noDb.stderr).toContain("DATABASE_NOT_FOUND");
    const role = new URL(TEST_DATABASE_URL);
    role.username = "soniq_no_such_role";
    const noRole = await runCli(["status", "--database-url", role.toString()], {});
    expect(noRole.stderr).toContain("DATABASE_AUTH");
    for (const r of [refused, noDb, noRole]) expect(r.code).toBe(2);
  });
});
