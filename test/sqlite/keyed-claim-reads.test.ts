// What a SQLite keyed drain reads per claim (issue 28): after a read of due jobs without a key
// that found nothing, keyed jobs go first and that read runs on every DRY_ORDINARY_EVERY-th claim
// only — and a job without a key queued meanwhile is still claimed within that many claims.
import { join } from "node:path";
import Database from "better-sqlite3";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { DRY_ORDINARY_EVERY } from "../../src/backends/sqlite/transactions.js";
import { Soniq } from "../../src/index.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

describe("sqlite: the keyed claim's reads", () => {
  let backend: SqliteBackend;
  let soniq: Soniq;

  beforeAll(async () => {
    backend = new SqliteBackend({ path: join(tempDir("soniq-keyed-reads-"), "jobs.db") });
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

  it("20 full claims of keyed jobs › at most 5 reads of jobs without a key; a job without a key queued meanwhile is claimed within 4 claims", async () => {
    const keyed = soniq.job({
      name: "reads.keyed",
      concurrency: {
        key: (args: { k: number }) => `k${String(args.k).padStart(3, "0")}`,
        limit: 1,
      },
      handler: async () => undefined,
    });
    const plain = soniq.job({ name: "reads.plain", handler: async () => undefined });
    await keyed.enqueueMany(Array.from({ length: 100 }, (_, k) => ({ args: { k } })));
    // better-sqlite3's statements share one prototype: count the runs of the read without a key.
    const scratch = new Database(":memory:");
    const proto = Object.getPrototypeOf(scratch.prepare("SELECT 1")) as {
      all: (...args: unknown[]) => unknown;
    };
    scratch.close();
    let ordinary = 0;
    const all = proto.all;
    vi.spyOn(proto, "all").mockImplementation(function (
      this: { source: string },
      ...args: unknown[]
    ) {
      if (
        /^SELECT id FROM soniq_jobs\s+WHERE status = 'queued' AND scheduled_at <= @now/.test(
          this.source,
        )
      ) {
        ordinary += 1;
      }
      return all.apply(this, args);
    } as never);
    const claim = () => backend.jobClaim({ workerId: "w1", queues: null, limit: 3 });
    for (let n = 0; n < 20; n++) expect((await claim()).length).toBe(3);
    expect(ordinary).toBeGreaterThan(0);
    expect(ordinary).toBeLessThanOrEqual(Math.ceil(20 / DRY_ORDINARY_EVERY));
    expect(DRY_ORDINARY_EVERY).toBe(4);

    await plain.enqueue({});
    let within = 0;
    for (let n = 1; n <= DRY_ORDINARY_EVERY && within === 0; n++) {
      if ((await claim()).some((job) => job.name === "reads.plain")) within = n;
    }
    expect(within).toBeGreaterThan(0);
  });
});
