// Schema creation: versioned migrations, concurrent setup(), options validation, SCHEMA_NOT_READY.
import { readdirSync } from "node:fs";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { isSoniqError } from "../../src/errors.js";
import { newJob } from "../contract/helpers.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

const migrationFiles = readdirSync(
  new URL("../../src/backends/postgres/migrations/", import.meta.url),
).filter((f) => f.endsWith(".sql"));

describe("postgres: options", () => {
  it.each(["Soniq", "1abc", "has-dash", "", "a".repeat(64), 'x"y'])(
    "rejects the schema name %j with INVALID_OPTION",
    (schema) => {
      let err: unknown;
      try {
        new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 1 });
      } catch (e) {
        err = e;
      }
      expect(isSoniqError(err, "INVALID_OPTION")).toBe(true);
    },
  );

  it("rejects a pool size that is not a positive integer", () => {
    for (const poolSize of [0, -1, 1.5, Number.NaN]) {
      expect(
        () =>
          new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema: "soniq", poolSize }),
      ).toThrow(/INVALID_OPTION/);
    }
  });

  it("rejects a pooler other than none or transaction, and a listenUrl that is not postgres://", () => {
    const base = { connectionString: TEST_DATABASE_URL, schema: "soniq", poolSize: 1 };
    const codeOf = (make: () => unknown) => {
      try {
        make();
      } catch (e) {
        return isSoniqError(e, "INVALID_OPTION") ? (e.details as { option?: string }).option : e;
      }
      return "no error";
    };
    expect(codeOf(() => new PostgresBackend({ ...base, pooler: "session" as "none" }))).toBe(
      "pooler",
    );
    for (const listenUrl of ["", "mysql://x/y", "sqlite:./a.db"]) {
      expect(codeOf(() => new PostgresBackend({ ...base, listenUrl }))).toBe("listenUrl");
    }
  });

  it("reports cross-process wake-ups only when a LISTEN connection exists", () => {
    const base = { connectionString: TEST_DATABASE_URL, schema: "soniq", poolSize: 1 };
    expect(new PostgresBackend(base).capabilities.crossProcessWake).toBe(true);
    const pooled = { ...base, pooler: "transaction" as const };
    expect(new PostgresBackend(pooled).capabilities.crossProcessWake).toBe(false);
    expect(
      new PostgresBackend({ ...pooled, listenUrl: TEST_DATABASE_URL }).capabilities
        .crossProcessWake,
    ).toBe(true);
  });
});

describePostgres("postgres: setup", () => {
  const schemas = usePostgresSchemas();
  const backends: PostgresBackend[] = [];

  afterEach(async () => {
    for (const b of backends.splice(0)) await b.close().catch(() => undefined);
  });

  function open(schema: string): PostgresBackend {
    const b = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });
    backends.push(b);
    return b;
  }

  async function migrationCounts(schema: string): Promise<Array<{ version: number; n: number }>> {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ version: number; n: number }>(
        `SELECT version, count(*)::int AS n FROM "${schema}".soniq_migrations GROUP BY version ORDER BY version`,
      );
      return rows;
    } finally {
      await client.end();
    }
  }

  it("two setup() calls at once on a fresh schema both succeed, each migration applied once", async () => {
    const schema = schemas.next();
    const [a, b, c] = [open(schema), open(schema), open(schema)];
    await Promise.all([a.setup(), b.setup(), c.setup()]);
    const counts = await migrationCounts(schema);
    expect(counts).toHaveLength(migrationFiles.length);
    for (const row of counts) expect(row.n).toBe(1);
    // And the schema works from every instance.
    const job = newJob();
    await a.jobEnqueue({ jobs: [job] });
    expect(await b.jobGet({ id: job.id })).toMatchObject({ id: job.id, status: "queued" });
  });

  it("setup is idempotent on an existing schema", async () => {
    const schema = schemas.next();
    await open(schema).setup();
    await open(schema).setup();
    expect((await migrationCounts(schema)).every((row) => row.n === 1)).toBe(true);
  });

  it("calls before setup reject with SCHEMA_NOT_READY", async () => {
    const schema = schemas.next();
    const b = open(schema);
    for (const call of [
      () => b.jobStats(),
      () => b.jobEnqueue({ jobs: [newJob()] }),
      () => b.jobClaim({ workerId: "w", queues: null, limit: 1 }),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(isSoniqError(err, "SCHEMA_NOT_READY")).toBe(true);
      expect(String((err as Error).message)).toContain("soniq setup");
    }
  });
});
