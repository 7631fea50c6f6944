/**
 * README ("Signals and exit codes": 2 is a start-up or configuration error) and docs/operations.md
 * ("Errors on the command line"): the built `soniq worker` exits 2 with a coded error — and
 * registers no worker row — when its store has no tables (`SCHEMA_NOT_READY`: a PostgreSQL schema
 * that exists but is empty, a SQLite file that does not exist or is an empty database) or when the
 * database cannot be reached (`DATABASE_UNREACHABLE`: a port nothing listens on); and when its
 * store is behind this build (docs/backends.md, "The upgrade": the newest migration applied is
 * older than the build's, `SCHEMA_NOT_READY` naming both), until `soniq setup` brings it up.
 */
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/backends/shared/migrations.js";
import { runCli } from "../helpers/cli.js";
import { FIXTURE, startWorker } from "../helpers/e2e-targets.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";
import { availableKinds, usePostgresSchemas } from "../helpers/test-backends.js";

const available = await availableKinds(["PostgreSQL"]);

/** A TCP port on 127.0.0.1 that nothing listens on (bound by the OS, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Runs `soniq worker --json` on the fixture and returns the exit, the coded error and the time. */
async function worker(env: Record<string, string>) {
  const t0 = Date.now();
  const out = await runCli(["worker", FIXTURE, "--json"], env);
  const lastLine = out.stdout.trim().split("\n").at(-1) ?? "";
  return { ...out, elapsedMs: Date.now() - t0, json: lastLine ? JSON.parse(lastLine) : undefined };
}

/** The newest migration of this build, per engine. */
const NEWEST = {
  sqlite: loadMigrations("sqlite").at(-1)?.version ?? 0,
  postgres: loadMigrations("postgres").at(-1)?.version ?? 0,
};

/** The refusal of a build newer than its store (`where`: `"schema"` or `in /path`). */
const behind = (where: string, at: number, needs: number) =>
  `soniq: SCHEMA_NOT_READY: the database schema ${where} is at migration ${at}; this version of Soniq needs ${needs}: run \`soniq setup\``;

/** The stack-trace marker a coded refusal never prints. */
const STACK_LINE = /\n\s+at .+:\d+:\d+/;

describe("soniq worker refuses to start on a store it cannot use (exit 2)", () => {
  it("SQLite file that does not exist › exit 2 SCHEMA_NOT_READY, no file created", async () => {
    const path = join(tempDir(), "missing.db");
    const out = await worker({ SONIQ_DATABASE_URL: `sqlite:${path}` });
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toContain("soniq: SCHEMA_NOT_READY");
    expect(out.stderr).not.toMatch(STACK_LINE);
    expect(out.json).toMatchObject({ error: { code: "SCHEMA_NOT_READY" } });
    expect(existsSync(path)).toBe(false);
  }, 60_000);

  it("SQLite file that is a database without Soniq's tables › exit 2 SCHEMA_NOT_READY, no table made", async () => {
    const path = join(tempDir(), "empty.db");
    const db = new Database(path);
    db.exec("CREATE TABLE other_app (id INTEGER PRIMARY KEY)");
    db.close();
    const out = await worker({ SONIQ_DATABASE_URL: `sqlite:${path}` });
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toContain("soniq: SCHEMA_NOT_READY");
    expect(out.stderr).not.toMatch(STACK_LINE);
    const after = new Database(path, { readonly: true });
    const tables = after
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all() as { name: string }[];
    after.close();
    expect(tables.map((t) => t.name)).toEqual(["other_app"]);
  }, 60_000);

  it("SQLite file one migration behind this build › exit 2 SCHEMA_NOT_READY naming both, no worker row; after soniq setup it starts", async () => {
    const path = join(tempDir(), "behind.db");
    const db = new Database(path);
    db.exec(`CREATE TABLE soniq_migrations (version INTEGER NOT NULL PRIMARY KEY,
      name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
    for (const m of loadMigrations("sqlite").filter((m) => m.version < NEWEST.sqlite)) {
      db.exec(m.sql);
      db.prepare("INSERT INTO soniq_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        m.version,
        m.name,
        Date.now(),
      );
    }
    db.close();
    const env = { SONIQ_DATABASE_URL: `sqlite:${path}` };
    const out = await worker(env);
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toContain(behind(`in ${path}`, NEWEST.sqlite - 1, NEWEST.sqlite));
    expect(out.stderr).not.toMatch(STACK_LINE);
    expect(out.json).toMatchObject({ error: { code: "SCHEMA_NOT_READY" } });
    const after = new Database(path, { readonly: true });
    expect(after.prepare("SELECT count(*) AS n FROM soniq_workers").get()).toEqual({ n: 0 });
    after.close();

    const setup = await runCli(["setup"], env);
    expect(setup.code, setup.stderr).toBe(0);
    const started = startWorker(env);
    await started.ready;
    started.child.kill("SIGTERM");
    expect((await started.exited).code).toBe(0);
  }, 90_000);

  describe.skipIf(!available.has("PostgreSQL"))("PostgreSQL", () => {
    const schemas = usePostgresSchemas("soniq_pre");

    it("an empty schema › exit 2 SCHEMA_NOT_READY naming the schema, nothing created in it", async () => {
      const schema = schemas.next();
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`CREATE SCHEMA "${schema}"`);
        const out = await worker({ SONIQ_DATABASE_URL: TEST_DATABASE_URL, SONIQ_SCHEMA: schema });
        expect(out.code, out.stderr).toBe(2);
        expect(out.stderr).toContain("soniq: SCHEMA_NOT_READY");
        expect(out.stderr).toContain(schema);
        expect(out.stderr).not.toMatch(STACK_LINE);
        expect(out.json).toMatchObject({ error: { code: "SCHEMA_NOT_READY" } });
        const made = await client.query(
          "SELECT count(*)::int AS n FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE n.nspname = $1",
          [schema],
        );
        expect(made.rows[0].n).toBe(0);
      } finally {
        await client.end();
      }
    }, 60_000);

    it("a schema one migration behind this build › exit 2 SCHEMA_NOT_READY naming both, no worker row; soniq setup brings it up", async () => {
      const schema = schemas.next();
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`CREATE SCHEMA "${schema}"`);
        await client.query(`SET search_path TO "${schema}"`);
        await client.query(`CREATE TABLE soniq_migrations (version integer PRIMARY KEY,
          name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
        for (const m of loadMigrations("postgres").filter((m) => m.version < NEWEST.postgres)) {
          await client.query(m.sql);
          await client.query("INSERT INTO soniq_migrations (version, name) VALUES ($1, $2)", [
            m.version,
            m.file,
          ]);
        }
        const env = { SONIQ_DATABASE_URL: TEST_DATABASE_URL, SONIQ_SCHEMA: schema };
        const out = await worker(env);
        expect(out.code, out.stderr).toBe(2);
        expect(out.stderr).toContain(behind(`"${schema}"`, NEWEST.postgres - 1, NEWEST.postgres));
        expect(out.stderr).not.toMatch(STACK_LINE);
        expect(out.json).toMatchObject({ error: { code: "SCHEMA_NOT_READY" } });
        const rows = await client.query("SELECT count(*)::int AS n FROM soniq_workers");
        expect(rows.rows[0].n).toBe(0);

        const setup = await runCli(["setup"], env);
        expect(setup.code, setup.stderr).toBe(0);
        const applied = await client.query("SELECT max(version) AS v FROM soniq_migrations");
        expect(applied.rows[0].v).toBe(NEWEST.postgres);
      } finally {
        await client.end();
      }
    }, 60_000);

    it("a port nothing listens on › exit 2 DATABASE_UNREACHABLE, promptly", async () => {
      const port = await closedPort();
      const out = await worker({
        SONIQ_DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/test`,
        SONIQ_SCHEMA: "soniq_nowhere",
      });
      expect(out.code, out.stderr).toBe(2);
      expect(out.stderr).toContain("soniq: DATABASE_UNREACHABLE");
      expect(out.stderr).not.toMatch(STACK_LINE);
      expect(out.json).toMatchObject({ error: { code: "DATABASE_UNREACHABLE" } });
      // A refused connection is not retried for ever (generous: a CLI start is ~1.5 s of CPU).
      expect(out.elapsedMs).toBeLessThan(45_000);
    }, 60_000);
  });
});
