// The statements one SQLite claim runs (issue 28; docs/performance.md, "SQLite keyed claim and
// plain cost"): a claim while no job has a key runs no keyed read (one probe of the empty keyed
// index), a keyed claim's rotating pass is one statement, not two per key, and while every queued
// job has a key the read of jobs without one is replaced by two counts of index entries.
import { join } from "node:path";
import Database from "better-sqlite3";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { SQL } from "../../src/backends/sqlite/sql.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { DRY_ORDINARY_EVERY } from "../../src/backends/sqlite/transactions.js";
import { Soniq } from "../../src/index.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

/** The catalogue's name of a statement's text ("?" for one not in it: BEGIN, COMMIT…). */
const nameOf = new Map(Object.entries(SQL).map(([name, text]) => [text, name]));

describe("sqlite: the statements of a claim", () => {
  let backend: SqliteBackend;
  let soniq: Soniq;

  beforeAll(async () => {
    backend = new SqliteBackend({ path: join(tempDir("soniq-claim-statements-"), "jobs.db") });
    await backend.setup();
    soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await soniq.close();
    removeTempDirs();
  });

  /** Runs `fn`, recording the name of every statement run meanwhile. */
  async function recorded(fn: () => Promise<void>): Promise<string[]> {
    // better-sqlite3's statements share one prototype.
    const scratch = new Database(":memory:");
    const proto = Object.getPrototypeOf(scratch.prepare("SELECT 1")) as Record<
      "all" | "get" | "run",
      (...args: unknown[]) => unknown
    >;
    scratch.close();
    const names: string[] = [];
    for (const method of ["all", "get", "run"] as const) {
      const original = proto[method];
      vi.spyOn(proto, method).mockImplementation(function (
        this: { source: string },
        ...args: unknown[]
      ) {
        names.push(nameOf.get(this.source) ?? "?");
        return original.apply(this, args);
      } as never);
    }
    await fn();
    vi.restoreAllMocks();
    return names;
  }

  it("20 claims of jobs without a key › no keyed read, at most one keyed probe per claim, at most 5 statements each", async () => {
    const plain = soniq.job({ name: "statements.plain", handler: async () => undefined });
    await plain.enqueueMany(Array.from({ length: 200 }, (_, i) => ({ args: { i } })));
    const claim = (limit: number) => backend.jobClaim({ workerId: "w1", queues: null, limit });
    const names = await recorded(async () => {
      for (let n = 0; n < 20; n++) expect((await claim(10)).length).toBe(10);
    });
    const count = (name: string) => names.filter((n) => n === name).length;
    expect(names.filter((n) => n.startsWith("keyed") && n !== "keyedQueued")).toEqual([]);
    expect(count("keyedQueued")).toBeGreaterThan(0);
    expect(count("keyedQueued")).toBeLessThanOrEqual(20);
    expect(count("dueIds")).toBe(20);
    expect(count("claimByIds")).toBe(20);
    expect(count("restrictedQueueExists")).toBe(20);
    // Per claim: the clock, the restriction read, the read without a key, the claim's update and
    // at most the keyed probe.
    expect(names.filter((n) => n !== "?").length).toBeLessThanOrEqual(5 * 20);
    // A short claim (the queue empties) adds no keyed read either.
    const short = await recorded(async () => {
      expect((await claim(50)).length).toBe(0);
    });
    expect(short.filter((n) => n.startsWith("keyed") && n !== "keyedQueued")).toEqual([]);
  });

  it("keyed claims of 20 over 100 keys › one rotating-pass statement per claim, no statement per key", async () => {
    const keyed = soniq.job({
      name: "statements.keyed",
      concurrency: {
        key: (args: { k: number }) => `k${String(args.k).padStart(3, "0")}`,
        limit: 1,
      },
      handler: async () => undefined,
    });
    await keyed.enqueueMany(Array.from({ length: 100 }, (_, k) => ({ args: { k } })));
    const claim = () => backend.jobClaim({ workerId: "w2", queues: null, limit: 20 });
    const claimed: string[] = [];
    const names = await recorded(async () => {
      for (let n = 0; n < 5; n++) {
        const jobs = await claim();
        expect(jobs.length).toBe(20);
        claimed.push(...jobs.map((job) => job.id));
      }
    });
    expect(new Set(claimed).size).toBe(100);
    expect(names.filter((n) => n === "keyedPass").length).toBe(5);
    expect(
      names.filter((n) => n.startsWith("keyed") && n !== "keyedPass" && n !== "keyedQueued"),
    ).toEqual([]);
    // Per claim at most: the clock, the restriction read, the keyed probe, the pass, the read
    // without a key (every few claims) and the claim's update.
    expect(names.filter((n) => n !== "?").length).toBeLessThanOrEqual(6 * 5);
  });

  it("a backlog of keyed jobs only › after one read without a key that found nothing, 2 index counts instead of that read; a job without a key is still claimed within 4 claims", async () => {
    const keyed = soniq.job({
      name: "statements.only_keyed",
      concurrency: {
        key: (args: { k: number }) => `o${String(args.k).padStart(3, "0")}`,
        limit: 1,
      },
      handler: async () => undefined,
    });
    const plain = soniq.job({ name: "statements.late_plain", handler: async () => undefined });
    await keyed.enqueueMany(Array.from({ length: 100 }, (_, k) => ({ args: { k } })));
    const claim = () => backend.jobClaim({ workerId: "w3", queues: null, limit: 5 });
    const names = await recorded(async () => {
      for (let n = 0; n < 12; n++) expect((await claim()).length).toBe(5);
    });
    // At most the first claim's read (the connection's last read may have found jobs), then the
    // counts on every DRY_ORDINARY_EVERY-th claim.
    expect(names.filter((n) => n === "dueIds").length).toBeLessThanOrEqual(1);
    expect(names.filter((n) => n === "allQueuedKeyed").length).toBeGreaterThanOrEqual(2);

    await plain.enqueue({});
    let within = 0;
    for (let n = 1; n <= DRY_ORDINARY_EVERY && within === 0; n++) {
      if ((await claim()).some((job) => job.name === "statements.late_plain")) within = n;
    }
    expect(within).toBeGreaterThan(0);
  });
});
