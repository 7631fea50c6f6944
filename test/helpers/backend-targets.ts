/**
 * Runs a describe block once per backend — memory, a SQLite file and PostgreSQL (skipped loudly
 * when unreachable) — each test getting a fresh, set-up, empty store. PostgreSQL shares one
 * schema per block (migrated once) and empties its tables before each test: much faster than a
 * schema per test.
 */
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { MemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { TEST_DATABASE_URL } from "./postgres.js";
import { POSTGRES_UP, usePostgresSchemas } from "./postgres-suite.js";
import { removeTempDirs, tempDir } from "./temp.js";

/** One backend a block runs on. */
export interface BackendTarget {
  /** `memory`, `SQLite file` or `PostgreSQL`. */
  label: string;
  /** A fresh, set-up, empty store for this test; closed after the test. */
  open(): Promise<Backend>;
}

/** Empties every Soniq table of `schema` but the migrations ledger. */
async function emptySchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> 'soniq_migrations'",
      [schema],
    );
    if (rows.length === 0) return;
    const tables = rows.map((r) => `"${schema}"."${r.tablename}"`).join(", ");
    await client.query(`TRUNCATE ${tables}`);
  } finally {
    await client.end();
  }
}

/** Registers the hooks of one target inside its describe block and returns it. */
function target(label: string): BackendTarget {
  const opened: Backend[] = [];
  afterEach(async () => {
    for (const backend of opened.splice(0)) await backend.close().catch(() => undefined);
  });
  if (label === "memory") {
    return {
      label,
      async open() {
        const backend = new MemoryBackend();
        opened.push(backend);
        return backend;
      },
    };
  }
  if (label === "SQLite file") {
    afterAll(() => removeTempDirs());
    return {
      label,
      async open() {
        const backend = new SqliteBackend({ path: join(tempDir("soniq-target-"), "soniq.db") });
        opened.push(backend);
        await backend.setup();
        return backend;
      },
    };
  }
  const schema = usePostgresSchemas("soniq_w").next();
  beforeAll(async () => {
    const backend = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema,
      poolSize: 1,
    });
    await backend.setup();
    await backend.close();
  });
  return {
    label,
    async open() {
      await emptySchema(schema);
      const backend = new PostgresBackend({
        connectionString: TEST_DATABASE_URL,
        schema,
        poolSize: 4,
      });
      opened.push(backend);
      return backend;
    },
  };
}

/** `fn` as one describe block per backend, named `${name} on ${label}`. */
export function describeEachBackend(name: string, fn: (target: BackendTarget) => void): void {
  for (const label of ["memory", "SQLite file", "PostgreSQL"]) {
    describe.skipIf(label === "PostgreSQL" && !POSTGRES_UP)(`${name} on ${label}`, () => {
      fn(target(label));
    });
  }
}
