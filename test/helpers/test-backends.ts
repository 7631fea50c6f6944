/**
 * The one place tests get a backend from. It knows each kind of store the tests use — `memory`,
 * a `SQLite file` and `PostgreSQL` — how to make a fresh, set-up, empty one, the options another
 * process or Soniq instance needs to reach the same store, and which kinds the multi-backend
 * suites run on. Changing what "memory" means ({@link makeMemory}) or which kinds a suite runs on
 * ({@link SUITE_KINDS}) is an edit here.
 *
 * - {@link memoryBackend}: a fresh memory store for a unit test, nothing registered.
 * - {@link useBackends}: stores of one kind for a describe block (or a file), closed after each
 *   test; PostgreSQL migrates one schema per block and empties its tables before each test (much
 *   faster than migrating a schema per test).
 * - {@link kindAvailable}: whether a kind can run here (PostgreSQL may be unreachable: the
 *   suites skip it loudly). Nothing here probes PostgreSQL at import, so memory-only files stay
 *   quiet about it.
 *
 * Users: describeEachBackend (backend-targets.ts), the e2e targets (e2e-targets.ts), the contract
 * suite (contract/runner.ts), the remote-job harness and the unit tests.
 */
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { MemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { dropSchemas, freshSchema, postgresAvailable, TEST_DATABASE_URL } from "./postgres.js";
import { tempDir } from "./temp.js";

/** A kind of store the tests use; also the label of its describe blocks. */
export type BackendKind = "memory" | "SQLite file" | "PostgreSQL";

/**
 * The kinds every multi-backend suite runs on (describeEachBackend, the remote-job suites): the
 * two engines. Memory mode is the SQLite engine on an in-memory database, so a worker suite run on
 * it repeats the SQLite file run's SQL and worker code; it keeps its own run where it adds
 * coverage — the backend contract (test/contract/memory.test.ts: memory mode is a public backend)
 * and the unit tests that move its clock.
 */
export const SUITE_KINDS: readonly BackendKind[] = ["SQLite file", "PostgreSQL"];

/** Whether a URL reaches a store of `kind` from another process (memory lives in one object). */
export function isShared(kind: BackendKind): boolean {
  return kind !== "memory";
}

/** The suite kinds whose store another process reaches: what the real-process suites run on. */
export const SHARED_KINDS: readonly BackendKind[] = SUITE_KINDS.filter(isShared);

/** Whether `kind` can run here: false for PostgreSQL when unreachable (warned loudly, once). */
export async function kindAvailable(kind: BackendKind): Promise<boolean> {
  return kind === "PostgreSQL" ? postgresAvailable() : true;
}

/** Which of `kinds` can run here (see {@link kindAvailable}); await it at a suite's top level. */
export async function availableKinds(
  kinds: readonly BackendKind[] = SUITE_KINDS,
): Promise<ReadonlySet<BackendKind>> {
  const answers = await Promise.all(kinds.map(kindAvailable));
  return new Set(kinds.filter((_, i) => answers[i]));
}

/** The `createBackend` / `new Soniq` options that reach a store: its URL and PostgreSQL schema. */
export interface StoreAddress {
  databaseUrl: string;
  /** PostgreSQL only. */
  schema?: string;
}

/** The `SONIQ_*` variables that point a `soniq` process at `address`. */
export function storeEnv(address: StoreAddress): Record<string, string> {
  return {
    SONIQ_DATABASE_URL: address.databaseUrl,
    ...(address.schema === undefined ? {} : { SONIQ_SCHEMA: address.schema }),
  };
}

/** Options of a fresh store; `clock` (the "database clock", ms) is for memory only. */
export interface StoreOptions {
  clock?: () => number;
}

/** A memory store, not yet set up: what "memory" means in the tests. */
function makeMemory(options: StoreOptions): Backend {
  return new MemoryBackend(options);
}

/** A fresh, set-up, empty memory store for one test; no hook closes it (an unclosed one goes with its object). */
export async function memoryBackend(options: StoreOptions = {}): Promise<Backend> {
  const backend = makeMemory(options);
  await backend.setup();
  return backend;
}

/** Fresh schema names for one describe block (or file): see {@link usePostgresSchemas}. */
export interface PostgresSchemas {
  /** A new schema name (not created: `setup()` creates it), dropped after the block. */
  next(): string;
  /** Drops `schema` (made elsewhere) after the block as well; returns it. */
  adopt(schema: string): string;
}

/**
 * Hands out fresh schema names and drops every one of them in `afterAll` of the enclosing block
 * (after hooks run in reverse order, so register it before the hook that closes the backends).
 * Call it inside the describe block (or at the top of a file).
 */
export function usePostgresSchemas(prefix?: string): PostgresSchemas {
  const made = new Set<string>();
  afterAll(async () => {
    if (made.size > 0 && (await postgresAvailable())) await dropSchemas([...made]);
    made.clear();
  });
  return {
    next() {
      const schema = freshSchema(prefix);
      made.add(schema);
      return schema;
    },
    adopt(schema) {
      made.add(schema);
      return schema;
    },
  };
}

/** Per schema: the statement that empties it (see {@link emptySchema}). */
const emptyingSql = new Map<string, string>();

/**
 * Empties every Soniq table of `schema` but the migrations ledger and restarts its sequences.
 * DELETE, not TRUNCATE: on tables this small it takes a millisecond, TRUNCATE tens.
 */
async function emptySchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    let sql = emptyingSql.get(schema);
    if (sql === undefined) {
      // Partitions are emptied through their table (the pruner may drop or make some between
      // two tests); the prune mark goes back to its first value rather than away.
      const tables = await client.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
           AND c.relname NOT IN ('soniq_migrations', 'soniq_prune_mark')`,
        [schema],
      );
      const marked = await client.query(
        "SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'soniq_prune_mark'",
        [schema],
      );
      const sequences = await client.query<{ name: string }>(
        "SELECT sequencename AS name FROM pg_sequences WHERE schemaname = $1",
        [schema],
      );
      sql = [
        ...tables.rows.map((t) => `DELETE FROM "${schema}"."${t.name}";`),
        ...sequences.rows.map((q) => `ALTER SEQUENCE "${schema}"."${q.name}" RESTART;`),
        ...(marked.rowCount
          ? [
              `UPDATE "${schema}"."soniq_prune_mark" SET expires_at = '-infinity', id = '00000000-0000-0000-0000-000000000000';`,
            ]
          : []),
      ].join("\n");
      emptyingSql.set(schema, sql);
    }
    if (sql.length > 0) await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Stores of one kind for one describe block: see {@link useBackends}. */
export interface TestBackends {
  readonly kind: BackendKind;
  /** A fresh, set-up, empty store, closed after the test. */
  open(options?: StoreOptions): Promise<Backend>;
  /** The options that reach `backend`'s store (one `open` made); undefined for memory. */
  address(backend: Backend): StoreAddress | undefined;
  /**
   * A new, empty store nobody has set up (`soniq setup` or `soniq.setup()` creates it), as the
   * options that reach it: a fresh SQLite file or PostgreSQL schema (dropped after the block).
   * Throws for memory, which no address reaches.
   */
  freshAddress(): StoreAddress;
}

/** Options of {@link useBackends}. */
export interface UseBackendsOptions {
  /** Prefix of the PostgreSQL schema names (to tell a suite's leftovers apart). */
  schemaPrefix?: string;
  /**
   * PostgreSQL through a transaction-mode pooler (test/helpers/pgbouncer.ts): the pool URL
   * (asked at each `open`, so the pooler may start in `beforeAll`) and the direct URL LISTEN
   * uses (`null` = no LISTEN, polling only). `setup()` (the migrations) goes through the pooler
   * too; the addresses other processes get ({@link TestBackends.address}) stay direct.
   */
  pooler?: () => { url: string; listenUrl: string | null };
}

/**
 * Stores of `kind` for the enclosing describe block (or file): registers its hooks, so call it
 * while the block is collected, and `open` in a test (or `beforeEach`): every backend `open`
 * makes is closed after its test. PostgreSQL migrates one schema for the block on the first
 * `open` and empties its tables on the first `open` of each later test (a second `open` in the
 * same test gets a schema of its own); every schema is dropped after the block.
 */
export function useBackends(kind: BackendKind, options: UseBackendsOptions = {}): TestBackends {
  const opened: Backend[] = [];
  const addresses = new WeakMap<Backend, StoreAddress>();
  const schemas = kind === "PostgreSQL" ? usePostgresSchemas(options.schemaPrefix) : undefined;
  /** PostgreSQL: the block's schema, once the block's first `open` migrated it. */
  let blockSchema: string | undefined;
  afterEach(async () => {
    for (const backend of opened.splice(0)) await backend.close().catch(() => undefined);
  });

  const freshAddress = (): StoreAddress => {
    if (kind === "SQLite file") return { databaseUrl: `sqlite:${join(tempDir(), "soniq.db")}` };
    if (schemas) return { databaseUrl: TEST_DATABASE_URL, schema: schemas.next() };
    throw new Error(`no address reaches a ${kind} store`);
  };

  const openPostgres = async (): Promise<Backend> => {
    const firstOfTest = opened.length === 0;
    const reuse = firstOfTest && blockSchema !== undefined;
    const schema = reuse ? (blockSchema as string) : (freshAddress().schema as string);
    if (reuse) await emptySchema(schema);
    const pooler = options.pooler?.();
    const backend = new PostgresBackend({
      connectionString: pooler?.url ?? TEST_DATABASE_URL,
      schema,
      poolSize: 4,
      ...(pooler
        ? {
            pooler: "transaction" as const,
            ...(pooler.listenUrl === null ? {} : { listenUrl: pooler.listenUrl }),
          }
        : {}),
    });
    addresses.set(backend, { databaseUrl: TEST_DATABASE_URL, schema });
    opened.push(backend);
    if (reuse) return backend;
    await backend.setup();
    if (firstOfTest) blockSchema = schema;
    return backend;
  };

  return {
    kind,
    async open(storeOptions = {}) {
      if (kind !== "memory" && storeOptions.clock) {
        throw new Error(`a clock is a memory option, not a ${kind} one`);
      }
      if (kind === "PostgreSQL") return openPostgres();
      let backend: Backend;
      if (kind === "memory") backend = makeMemory(storeOptions);
      else {
        const address = freshAddress();
        backend = new SqliteBackend({ path: address.databaseUrl.slice("sqlite:".length) });
        addresses.set(backend, address);
      }
      opened.push(backend);
      await backend.setup();
      return backend;
    },
    address(backend) {
      if (!isShared(kind)) return undefined;
      const address = addresses.get(backend);
      if (!address) throw new Error(`not a ${kind} store this block opened`);
      return address;
    },
    freshAddress,
  };
}
