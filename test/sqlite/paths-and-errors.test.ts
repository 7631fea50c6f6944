import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/backends/shared/migrations.js";
import { sqliteFileError } from "../../src/backends/sqlite/connection.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { isSoniqError } from "../../src/errors.js";
import { Soniq } from "../../src/soniq.js";
import { newJob } from "../contract/helpers.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

describe("sqlite: paths and errors", () => {
  const opened: SqliteBackend[] = [];
  const open = (path: string, busyTimeoutMs?: number) => {
    const backend = new SqliteBackend(
      busyTimeoutMs === undefined ? { path } : { path, busyTimeoutMs },
    );
    opened.push(backend);
    return backend;
  };
  afterAll(async () => {
    for (const backend of opened) await backend.close();
    removeTempDirs();
  });

  it("creates missing parent directories", async () => {
    const dir = join(tempDir("soniq-sqlite-nested-"), "a", "b", "c");
    const path = join(dir, "nested.db");
    expect(existsSync(dir)).toBe(false);
    const backend = open(path);
    await backend.setup();
    expect(existsSync(path)).toBe(true);
    expect(backend.path).toBe(path);
    const job = newJob();
    expect(await backend.jobEnqueue({ jobs: [job] })).toEqual([{ id: job.id, inserted: true }]);
  });

  it("opens a private in-memory database for :memory:", async () => {
    const backend = open(":memory:");
    await backend.setup();
    const job = newJob();
    await backend.jobEnqueue({ jobs: [job] });
    expect(await backend.jobGet({ id: job.id })).toMatchObject({ id: job.id, status: "queued" });
    const other = open(":memory:");
    await other.setup();
    expect(await other.jobGet({ id: job.id })).toBeNull();
  });

  it("rejects an empty path and a bad busy timeout with INVALID_OPTION", () => {
    const attempts = [
      () => new SqliteBackend({ path: "" }),
      () => new SqliteBackend({ path: ":memory:", busyTimeoutMs: -1 }),
      () => new SqliteBackend({ path: ":memory:", busyTimeoutMs: 1.5 }),
    ];
    for (const attempt of attempts) {
      let err: unknown;
      try {
        attempt();
      } catch (e) {
        err = e;
      }
      expect(isSoniqError(err, "INVALID_OPTION")).toBe(true);
    }
  });

  it("setup › a file that cannot be created › DATABASE_UNREACHABLE naming the path and the cause", async () => {
    // Tests run as root, which ignores file modes; /proc allows no new files even to root, so the
    // driver really fails with SQLITE_CANTOPEN ("unable to open database file", no path in it).
    const path = `/proc/soniq-${process.pid}-cannot-open.db`;
    const err = await open(path)
      .setup()
      .catch((e: unknown) => e);
    expect(isSoniqError(err, "DATABASE_UNREACHABLE")).toBe(true);
    expect((err as Error).message).toContain(path);
    expect((err as Error).message).toMatch(/cannot be opened or written/);
    expect((err as Error).message).toMatch(/read-only/);
    expect((err as { cause?: { code?: string } }).cause?.code).toBe("SQLITE_CANTOPEN");
  });

  it("setup › a missing directory under /proc (mkdir answers ENOENT though /proc exists) › DATABASE_UNREACHABLE at once, no hang", async () => {
    // Node's recursive mkdir retries ENOENT for ever here; the parent directories are made one
    // level at a time, so the refusal surfaces as an error (it hung before: bug found by review).
    const path = `/proc/soniq-${process.pid}-no-dir/sub/q.db`;
    const started = performance.now();
    const err = await open(path)
      .setup()
      .catch((e: unknown) => e);
    // Generous bound: the failure is one mkdir call; the old code never returned.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(isSoniqError(err, "DATABASE_UNREACHABLE")).toBe(true);
    expect((err as Error).message).toContain(path);
    expect((err as { cause?: { code?: string } }).cause?.code).toBe("ENOENT");
  });

  it("a write the driver refuses as read-only › DATABASE_UNREACHABLE naming the path", () => {
    // Root cannot be refused a write by file modes; a connection opened read-only produces the
    // driver's real SQLITE_READONLY, which the connection translates the same way.
    const path = join(tempDir("soniq-sqlite-readonly-"), "ro.db");
    new Database(path).exec("CREATE TABLE t (x INTEGER)");
    const readOnly = new Database(path, { readonly: true });
    let driverError: unknown;
    try {
      readOnly.exec("INSERT INTO t VALUES (1)");
    } catch (e) {
      driverError = e;
    } finally {
      readOnly.close();
    }
    expect((driverError as { code?: string }).code).toBe("SQLITE_READONLY");
    const err = sqliteFileError(driverError, "sub/../ro.db");
    expect(isSoniqError(err, "DATABASE_UNREACHABLE")).toBe(true);
    expect(err?.message).toContain(resolve("ro.db"));
    expect(err?.message).toMatch(/cannot be opened or written/);
    expect(sqliteFileError(new Error("other"), path)).toBeUndefined();
  });

  it("reports a missing schema as SCHEMA_NOT_READY until setup runs", async () => {
    const backend = open(join(tempDir("soniq-sqlite-noschema-"), "empty.db"));
    const err = await backend
      .jobClaim({ workerId: "w", queues: null, limit: 1 })
      .catch((e: unknown) => e);
    expect(isSoniqError(err, "SCHEMA_NOT_READY")).toBe(true);
    expect((err as Error).message).toMatch(/soniq setup/);
    expect(
      isSoniqError(await backend.jobStats().catch((e: unknown) => e), "SCHEMA_NOT_READY"),
    ).toBe(true);
    await backend.setup();
    expect((await backend.jobStats()).total).toBe(0);
  });

  it("enqueue › a transactional enqueue on SQLite › refused with UNSUPPORTED, nothing written", async () => {
    const backend = open(":memory:");
    await backend.setup();
    expect(backend.capabilities.transactionalEnqueue).toBe(false);
    const soniq = new Soniq({
      backend,
      rejectUnknownJobs: false,
      logger: pino({ level: "silent" }),
      env: {},
    });
    const connection = { query: async () => ({ rows: [], rowCount: 0 }) };
    const err = await soniq.enqueue("any.job", {}, { connection }).catch((e: unknown) => e);
    expect(isSoniqError(err, "UNSUPPORTED")).toBe(true);
    expect((await backend.jobStats()).total).toBe(0);
  });

  it("rejects every call after close with CLOSED, and close is idempotent", async () => {
    const backend = open(":memory:");
    await backend.setup();
    await backend.close();
    await backend.close();
    const calls: Array<() => Promise<unknown>> = [
      () => backend.setup(),
      () => backend.now(),
      () => backend.jobEnqueue({ jobs: [newJob()] }),
      () => backend.jobClaim({ workerId: "w", queues: null, limit: 1 }),
      () => backend.jobNack({ id: "x", owner: { workerId: "w", claimToken: "t" } }),
      () => backend.jobGet({ id: "x" }),
      () => backend.workerList({ heartbeatTimeoutSeconds: 60 }),
      () => backend.jobPruneFinished({}),
    ];
    for (const call of calls) {
      expect(isSoniqError(await call().catch((e: unknown) => e), "CLOSED")).toBe(true);
    }
  });

  it("surfaces SQLITE_BUSY past the busy timeout instead of swallowing it", async () => {
    const path = join(tempDir("soniq-sqlite-busy-"), "busy.db");
    const holder = open(path);
    await holder.setup();
    const impatient = open(path, 50);
    const locker = new Database(path);
    try {
      locker.exec("BEGIN IMMEDIATE");
      const err = await impatient.jobEnqueue({ jobs: [newJob()] }).catch((e: unknown) => e);
      expect((err as { code?: string }).code).toMatch(/^SQLITE_BUSY/);
      locker.exec("ROLLBACK");
      expect(await impatient.jobEnqueue({ jobs: [newJob()] })).toHaveLength(1);
    } finally {
      locker.close();
    }
  });

  it("applies each migration once however often setup runs", async () => {
    const path = join(tempDir("soniq-sqlite-migrations-"), "m.db");
    const backend = open(path);
    await backend.setup();
    await backend.setup();
    const db = new Database(path, { readonly: true });
    try {
      const rows = db.prepare("SELECT name, applied_at FROM soniq_migrations").all() as Array<{
        name: string;
        applied_at: number;
      }>;
      expect(rows.map((r) => r.name)).toEqual(loadMigrations("sqlite").map((m) => m.name));
      expect(Math.abs((rows[0]?.applied_at ?? 0) - Date.now())).toBeLessThan(60_000);
    } finally {
      db.close();
    }
  });
});
