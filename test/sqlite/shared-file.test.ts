import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { newJob } from "../contract/helpers.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

describe("sqlite: one file, several connections", () => {
  const opened: SqliteBackend[] = [];
  const open = (path: string) => {
    const backend = new SqliteBackend({ path });
    opened.push(backend);
    return backend;
  };
  afterAll(async () => {
    for (const backend of opened) await backend.close();
    removeTempDirs();
  });

  it("uses WAL, synchronous=NORMAL and the busy timeout", async () => {
    const path = join(tempDir("soniq-sqlite-wal-"), "wal.db");
    const backend = open(path);
    await backend.setup();
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    } finally {
      db.close();
    }
    expect(backend.busyTimeoutMs).toBe(5000);
    expect(open(join(tempDir("soniq-sqlite-wal-"), "t.db")).busyTimeoutMs).toBe(5000);
    const custom = new SqliteBackend({
      path: join(tempDir("soniq-sqlite-wal-"), "c.db"),
      busyTimeoutMs: 250,
    });
    opened.push(custom);
    expect(custom.busyTimeoutMs).toBe(250);
  });

  it("a second backend on the same file sees the first one's jobs and claims", async () => {
    const path = join(tempDir("soniq-sqlite-shared-"), "shared.db");
    const first = open(path);
    await first.setup();
    const second = open(path);

    const job = newJob({ args: JSON.stringify({ s: "✓" }) });
    await first.jobEnqueue({ jobs: [job] });
    expect(await second.jobGet({ id: job.id })).toMatchObject({
      id: job.id,
      status: "queued",
      args: job.args,
    });
    expect((await second.jobStats()).queued).toBe(1);

    const [claimed] = await second.jobClaim({ workerId: "w2", queues: null, limit: 1 });
    if (!claimed) throw new Error("nothing claimed");
    expect(claimed.id).toBe(job.id);
    expect(await first.jobClaim({ workerId: "w1", queues: null, limit: 1 })).toHaveLength(0);
    expect(await first.jobGet({ id: job.id })).toMatchObject({
      status: "processing",
      workerId: "w2",
    });
    expect(
      await first.jobComplete({
        id: job.id,
        owner: { workerId: claimed.workerId, claimToken: claimed.claimToken },
        result: "1",
        resultRetentionSeconds: 60,
      }),
    ).toBe(true);
    expect(await second.jobGet({ id: job.id })).toMatchObject({
      status: "done",
      result: "1",
      attempts: 1,
    });
  });

  it("stores times as INTEGER milliseconds of the database clock and JSON text unchanged", async () => {
    const path = join(tempDir("soniq-sqlite-raw-"), "raw.db");
    const backend = open(path);
    await backend.setup();
    const runAt = new Date(Date.UTC(2030, 0, 2, 3, 4, 5, 678));
    const args = '{ "spaced" :  [1,  2] , "k":"é" }';
    const at = newJob({ runAt, args });
    const later = newJob({ delaySeconds: 90.5 });
    await backend.jobEnqueue({ jobs: [at, later] });
    const db = new Database(path, { readonly: true });
    try {
      const raw = db
        .prepare(
          "SELECT id, args, scheduled_at, created_at, typeof(scheduled_at) AS t1, typeof(created_at) AS t2 FROM soniq_jobs",
        )
        .all() as Array<{
        id: string;
        args: string;
        scheduled_at: number;
        created_at: number;
        t1: string;
        t2: string;
      }>;
      const rawAt = raw.find((r) => r.id === at.id);
      const rawLater = raw.find((r) => r.id === later.id);
      expect(rawAt).toMatchObject({
        args,
        scheduled_at: runAt.getTime(),
        t1: "integer",
        t2: "integer",
      });
      expect(rawLater && rawLater.scheduled_at - rawLater.created_at).toBe(90_500);
    } finally {
      db.close();
    }
    expect((await backend.jobGet({ id: at.id }))?.scheduledAt).toEqual(runAt);
  });
});
