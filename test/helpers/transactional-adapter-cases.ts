/**
 * The cases every transactional-enqueue adapter (src/adapters/*.ts) passes, against the real
 * library and PostgreSQL: a job enqueued in a rolled-back transaction never exists, never wakes
 * a worker (no NOTIFY, no claim, no hand-off, its handler never runs); a committed one is
 * invisible until commit, wakes the worker at commit and runs; the same for `enqueueMany`. Off
 * PostgreSQL, the adapter's connection is refused with `UNSUPPORTED` and nothing is written.
 */
import { join } from "node:path";
import pg from "pg";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import type { PgQueryable } from "../../src/backends/contract/index.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { Soniq } from "../../src/index.js";
import { TEST_DATABASE_URL } from "./postgres.js";
import { usePostgresSchemas } from "./postgres-suite.js";
import { tempDir } from "./temp.js";
import { waitFor } from "./wait.js";

/** One library's transactions, as the adapter's test drives them. */
export interface AdapterUnderTest {
  /**
   * Runs `work` in one transaction of the library, with the adapter's connection for it: the
   * transaction commits when `work` returns and rolls back when it throws (the error is rethrown,
   * as the library does).
   */
  transaction<T>(work: (connection: PgQueryable) => Promise<T>): Promise<T>;
  /** Closes the library's pool. */
  close(): Promise<void>;
}

/** Thrown inside a transaction to roll it back. */
class RollBack extends Error {}

/** The hand-off statement's text starts with this (src/backends/postgres/hand-off-sql.ts). */
const HAND_OFF_SQL = "WITH gate AS";

/** Registers the cases; `open` makes the library's client for a database URL. */
export function transactionalAdapterCases(open: () => Promise<AdapterUnderTest>): void {
  const schema = usePostgresSchemas("soniq_adapter").next();
  let adapter: AdapterUnderTest;
  let soniq: Soniq;
  let backend: PostgresBackend;
  const ran: number[] = [];
  const woke: string[] = [];
  const claims = { count: 0 };
  const handOffs = { count: 0 };
  let job: ReturnType<typeof define>;
  let probe: ReturnType<typeof defineProbe>;

  function define(s: Soniq) {
    return s.job({
      name: "adapter.job",
      queue: "tx",
      handler: async (args: { n: number }) => {
        ran.push(args.n);
        return args.n;
      },
    });
  }
  function defineProbe(s: Soniq) {
    return s.job({ name: "adapter.probe", queue: "probe", handler: async () => null });
  }

  let claimsInFlight = 0;

  beforeAll(async () => {
    backend = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 4 });
    await backend.setup();
    const claim = backend.jobClaim.bind(backend);
    vi.spyOn(backend, "jobClaim").mockImplementation(async (params) => {
      claimsInFlight += 1;
      try {
        const jobs = await claim(params);
        claims.count += 1;
        return jobs;
      } finally {
        claimsInFlight -= 1;
      }
    });
    const query = pg.Pool.prototype.query;
    vi.spyOn(pg.Pool.prototype, "query").mockImplementation(function (
      this: pg.Pool,
      ...args: unknown[]
    ) {
      const config = args[0] as { text?: string } | string;
      const text = typeof config === "string" ? config : (config?.text ?? "");
      if (text.trimStart().startsWith(HAND_OFF_SQL)) handOffs.count += 1;
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof pg.Pool.prototype.query);
    backend.notifier.subscribe((queue) => woke.push(queue));
    // Claims come only from wake-ups: no poll within any test's time.
    soniq = new Soniq({ backend, logger: pino({ level: "silent" }), pollInterval: 60 });
    job = define(soniq);
    probe = defineProbe(soniq);
    const worker = soniq.worker({ concurrency: 2, queues: ["tx"] });
    await worker.start();
    await waitFor(() => claims.count > 0, 10_000, "the worker's first claim");
    adapter = await open();
    // The LISTEN is up once a committed probe's NOTIFY arrives.
    await waitFor(
      async () => {
        await adapter.transaction((connection) => probe.enqueue({}, { connection }));
        return woke.includes("probe");
      },
      10_000,
      "the first NOTIFY",
    );
    // The LISTEN woke every queue ("*") when it came up: the claim that starts has answered.
    await waitFor(() => woke.includes("*"), 10_000, "the LISTEN's wake-up");
    await new Promise((r) => setTimeout(r, 50));
    await waitFor(() => claimsInFlight === 0, 10_000, "no claim in flight");
  }, 30_000);

  afterAll(async () => {
    vi.restoreAllMocks();
    await adapter?.close();
    await soniq?.close();
  });

  /** Commits a probe on a queue the worker does not serve and waits for its NOTIFY: any earlier commit's NOTIFY has been delivered by then (they arrive in commit order). */
  async function notificationsSettled(): Promise<void> {
    const before = woke.filter((q) => q === "probe").length;
    await adapter.transaction((connection) => probe.enqueue({}, { connection }));
    await waitFor(() => woke.filter((q) => q === "probe").length > before, 10_000, "the probe");
  }

  async function rolledBack(
    enqueue: (connection: PgQueryable) => Promise<string[]>,
  ): Promise<string[]> {
    const wokeBefore = woke.length;
    const claimsBefore = claims.count;
    const handOffsBefore = handOffs.count;
    const ranBefore = ran.length;
    const ids: string[] = [];
    await expect(
      adapter.transaction(async (connection) => {
        ids.push(...(await enqueue(connection)));
        throw new RollBack("roll back");
      }),
    ).rejects.toBeInstanceOf(RollBack);
    await notificationsSettled();
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(await soniq.getJob(id)).toBeNull();
    expect(woke.slice(wokeBefore).filter((q) => q === "tx")).toEqual([]);
    expect(claims.count).toBe(claimsBefore);
    expect(handOffs.count).toBe(handOffsBefore);
    expect(ran.length).toBe(ranBefore);
    return ids;
  }

  async function committed(
    enqueue: (connection: PgQueryable) => Promise<string[]>,
    expected: number[],
  ): Promise<void> {
    const wokeBefore = woke.length;
    const handOffsBefore = handOffs.count;
    const ids = await adapter.transaction(async (connection) => {
      const inserted = await enqueue(connection);
      // Invisible to everyone else until the commit.
      for (const id of inserted) expect(await soniq.getJob(id)).toBeNull();
      return inserted;
    });
    await waitFor(
      async () => {
        const jobs = await Promise.all(ids.map((id) => soniq.getJob(id)));
        return jobs.every((j) => j?.status === "done");
      },
      10_000,
      "the committed jobs to run",
    );
    expect(woke.slice(wokeBefore)).toContain("tx");
    expect(handOffs.count).toBe(handOffsBefore);
    for (const n of expected) expect(ran).toContain(n);
  }

  it("adapter › enqueue in a rolled-back transaction › the job never exists, no NOTIFY, no claim, no hand-off, never runs", async () => {
    await rolledBack(async (connection) => [await job.enqueue({ n: 1 }, { connection })]);
  });

  it("adapter › enqueue in a committed transaction › invisible until commit, then woken and run", async () => {
    await committed(async (connection) => [await job.enqueue({ n: 2 }, { connection })], [2]);
  });

  it("adapter › enqueueMany in a rolled-back transaction › none of the jobs exists or runs", async () => {
    const ids = await rolledBack((connection) =>
      job.enqueueMany([{ args: { n: 10 } }, { args: { n: 11 } }, { args: { n: 12 } }], connection),
    );
    expect(ids).toHaveLength(3);
  });

  it("adapter › enqueueMany and Soniq.enqueueMany in a committed transaction › every job runs", async () => {
    await committed(
      async (connection) => [
        ...(await job.enqueueMany([{ args: { n: 20 } }, { args: { n: 21 } }], connection)),
        ...(await soniq.enqueueMany(
          [
            { name: "adapter.job", args: { n: 22 } },
            { name: "adapter.job", args: { n: 23 }, options: { dedupKey: "adapter-23" } },
          ],
          { connection },
        )),
      ],
      [20, 21, 22, 23],
    );
  });

  it("adapter › its connection on a SQLite instance › UNSUPPORTED, nothing written", async () => {
    const sqlite = new Soniq({
      databaseUrl: `sqlite:${join(tempDir(), "adapter.db")}`,
      logLevel: "silent",
    });
    try {
      const sqliteJob = define(sqlite);
      await sqlite.setup();
      await adapter.transaction(async (connection) => {
        await expect(sqliteJob.enqueue({ n: 99 }, { connection })).rejects.toMatchObject({
          code: "UNSUPPORTED",
        });
      });
      expect((await sqlite.stats()).total).toBe(0);
    } finally {
      await sqlite.close();
    }
  });
}
