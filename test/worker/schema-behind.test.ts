// A worker whose build is newer than the schema (docs/backends.md, "The upgrade"): its start is
// refused at registration with `SCHEMA_NOT_READY` naming both migrations, no worker row is written
// and no job is claimed; `setup()` brings the schema up and the same build then starts and runs
// jobs. On PostgreSQL and on a SQLite file (the in-memory store is always set up).
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { loadMigrations, type MigrationEngine } from "../../src/backends/shared/migrations.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { isSoniqError, Soniq, type SoniqError } from "../../src/index.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

afterAll(() => removeTempDirs());

const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
afterAll(() => pool.end());

const newest = (engine: MigrationEngine) => loadMigrations(engine).at(-1)?.version ?? 0;

/** An instance over `backend` with one job, fast polling. */
function instance(backend: Backend) {
  const soniq = new Soniq({
    backend,
    logger: pino({ level: "silent" }),
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
  });
  const ran: string[] = [];
  const job = soniq.job({
    name: "schema.behind",
    handler: async (_args: Record<string, never>, ctx) => {
      ran.push(ctx.jobId);
    },
  });
  return { soniq, job, ran };
}

/** Starts a worker and expects the refusal: the code, the message, exit 2, no worker row. */
async function expectRefused(soniq: Soniq, where: string, at: number, needs: number) {
  const worker = soniq.worker();
  const err = await worker.start().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isSoniqError(err, "SCHEMA_NOT_READY"), String(err)).toBe(true);
  expect((err as SoniqError).message).toBe(
    `SCHEMA_NOT_READY: the database schema ${where} is at migration ${at}; this version of Soniq needs ${needs}: run \`soniq setup\``,
  );
  expect((err as SoniqError).details).toEqual({ schemaVersion: at, requiredVersion: needs });
  expect(await worker.finished).toMatchObject({ reason: "start_failed", exitCode: 2 });
  expect(await soniq.workers()).toEqual([]);
}

/** A started worker runs a job enqueued now, then drains. */
async function expectRuns(soniq: Soniq, job: ReturnType<typeof instance>["job"], ran: string[]) {
  const worker = soniq.worker();
  await worker.start();
  const id = await job.enqueue({});
  await waitFor(() => ran.includes(id), 10_000, "the job ran");
  expect(await worker.stop()).toMatchObject({ reason: "drained", exitCode: 0 });
}

describe("sqlite file: a worker newer than the schema", () => {
  /** A file set up at every migration up to `upTo` (recorded as setup records them). */
  function fileAt(upTo: number): string {
    const path = join(tempDir("soniq-schema-behind-"), "q.db");
    const db = new Database(path);
    db.exec(`CREATE TABLE soniq_migrations (version INTEGER NOT NULL PRIMARY KEY,
      name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
    for (const m of loadMigrations("sqlite").filter((m) => m.version <= upTo)) {
      db.exec(m.sql);
      db.prepare("INSERT INTO soniq_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        m.version,
        m.name,
        Date.now(),
      );
    }
    db.close();
    return path;
  }

  it("newest migration rows deleted › start refused, no row, the queued job not claimed", async () => {
    const needs = newest("sqlite");
    const path = fileAt(needs);
    const { soniq, job } = instance(new SqliteBackend({ path }));
    try {
      const id = await job.enqueue({});
      const db = new Database(path);
      db.prepare("DELETE FROM soniq_migrations WHERE version >= ?").run(needs - 1);
      db.close();
      await expectRefused(soniq, `in ${path}`, needs - 2, needs);
      expect(await soniq.getJob(id)).toMatchObject({ status: "queued", attempts: 0 });
    } finally {
      await soniq.close();
    }
  });

  it("a file at the previous migration › refused; setup() upgrades it; the worker then runs jobs", async () => {
    const needs = newest("sqlite");
    const path = fileAt(needs - 1);
    const { soniq, job, ran } = instance(new SqliteBackend({ path }));
    try {
      await expectRefused(soniq, `in ${path}`, needs - 1, needs);
      await soniq.setup();
      await expectRuns(soniq, job, ran);
    } finally {
      await soniq.close();
    }
  });

  it("an up-to-date file and the in-memory store › the worker registers and runs jobs", async () => {
    for (const path of [fileAt(newest("sqlite")), ":memory:"]) {
      const { soniq, job, ran } = instance(new SqliteBackend({ path }));
      try {
        await expectRuns(soniq, job, ran);
      } finally {
        await soniq.close();
      }
    }
  });
});

describePostgres("postgres: a worker newer than the schema", () => {
  const schemas = usePostgresSchemas("soniq_behind");

  /** `schema` at every migration up to `upTo`, recorded as setup records them. */
  async function schemaAt(schema: string, upTo: number): Promise<void> {
    const c = await pool.connect();
    try {
      await c.query(`CREATE SCHEMA "${schema}"`);
      await c.query(`SET search_path TO "${schema}"`);
      await c.query(`CREATE TABLE soniq_migrations (version integer PRIMARY KEY, name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now())`);
      for (const m of loadMigrations("postgres").filter((m) => m.version <= upTo)) {
        await c.query(m.sql);
        await c.query("INSERT INTO soniq_migrations (version, name) VALUES ($1, $2)", [
          m.version,
          m.file,
        ]);
      }
    } finally {
      await c.query("RESET search_path");
      c.release();
    }
  }

  const backend = (schema: string) =>
    new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });

  it("newest migration rows deleted › start refused, no row, the queued job not claimed", async () => {
    const needs = newest("postgres");
    const schema = schemas.next();
    const { soniq, job } = instance(backend(schema));
    try {
      await soniq.setup();
      const id = await job.enqueue({});
      await pool.query(`DELETE FROM "${schema}".soniq_migrations WHERE version >= $1`, [needs - 1]);
      await expectRefused(soniq, `"${schema}"`, needs - 2, needs);
      expect(await soniq.getJob(id)).toMatchObject({ status: "queued", attempts: 0 });
    } finally {
      await soniq.close();
    }
  });

  it("a schema at the previous migration › refused; setup() upgrades it; the worker then runs jobs", async () => {
    const needs = newest("postgres");
    const schema = schemas.next();
    await schemaAt(schema, needs - 1);
    const { soniq, job, ran } = instance(backend(schema));
    try {
      await expectRefused(soniq, `"${schema}"`, needs - 1, needs);
      await soniq.setup();
      await expectRuns(soniq, job, ran);
    } finally {
      await soniq.close();
    }
  });

  it("an up-to-date schema › the worker registers (its row holds this build's version) and runs jobs", async () => {
    const schema = schemas.next();
    const { soniq, job, ran } = instance(backend(schema));
    try {
      await soniq.setup();
      await expectRuns(soniq, job, ran);
      const { rows } = await pool.query(`SELECT schema_version FROM "${schema}".soniq_workers`);
      expect(rows).toEqual([{ schema_version: newest("postgres") }]);
    } finally {
      await soniq.close();
    }
  });
});
