// The stored key column (SQLite migration 020): every insert writes `soniq_jobs.concurrency_key`
// from the `meta` it inserts — an enqueue, a bulk enqueue, a run-now of a finished keyed job —
// and a job without a key has none, so the keyed claim (which reads the column only) keeps the
// limit of each.
import { join } from "node:path";
import Database from "better-sqlite3";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { Soniq } from "../../src/index.js";
import { newJobId } from "../../src/jobs/job-id.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

describe("sqlite: the stored key column", () => {
  let path: string;
  let backend: SqliteBackend;
  let soniq: Soniq;

  beforeAll(async () => {
    path = join(tempDir("soniq-ckey-"), "jobs.db");
    backend = new SqliteBackend({ path });
    await backend.setup();
    soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
  });
  afterAll(async () => {
    await soniq.close();
    removeTempDirs();
  });

  const keyOf = (id: string) => {
    const raw = new Database(path, { readonly: true });
    try {
      return (
        raw.prepare("SELECT concurrency_key AS k FROM soniq_jobs WHERE id = ?").get(id) as
          | { k: string | null }
          | undefined
      )?.k;
    } finally {
      raw.close();
    }
  };

  it("enqueue, enqueueMany, a plain job, run-now of a finished keyed job › the column holds each job's key (NULL without one)", async () => {
    const keyed = soniq.job({
      name: "ckey.keyed",
      concurrency: { key: (args: { t: string }) => args.t, limit: 1 },
      handler: async () => undefined,
    });
    const plain = soniq.job({ name: "ckey.plain", handler: async () => undefined });
    const one = await keyed.enqueue({ t: "acme" });
    const many = await keyed.enqueueMany([{ args: { t: "beta" } }, { args: { t: "gamma" } }]);
    const none = await plain.enqueue({});
    expect(keyOf(one)).toBe("acme");
    expect(many.map((id) => keyOf(id))).toEqual(["beta", "gamma"]);
    expect(keyOf(none)).toBeNull();

    // A finished keyed job of `acme` (as a completion leaves it), run again now: back in the live
    // table with its key, and `acme`'s queued job and it share the limit of 1.
    const finished = newJobId();
    const raw = new Database(path);
    const now = Date.now();
    raw
      .prepare(
        `INSERT INTO soniq_finished_jobs (id, name, queue, args, status, priority, attempts,
           max_attempts, interruptions, scheduled_at, created_at, updated_at, finished_at,
           result_expires_at, start_known, uncharged_recoveries, meta)
         VALUES (?, 'ckey.keyed', 'default', '{"t":"acme"}', 'done', 0, 1, 5, 0, ?, ?, ?, ?, ?, 1,
           0, '{"concurrency":{"key":"acme","limit":1}}')`,
      )
      .run(finished, now, now, now, now, now + 86_400_000);
    raw.close();
    expect(await backend.admin.jobRetryNow({ id: finished })).toBe("done");
    expect(keyOf(finished)).toBe("acme");
    const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: 10 });
    const acme = claimed.filter((job) => job.id === one || job.id === finished);
    expect(acme).toHaveLength(1);
    expect(claimed).toHaveLength(4);
  });
});
