// The SQLite claim reads the due ids in claim order (plus each limited queue's within its room),
// then claims them with one `UPDATE … WHERE id IN (json_each) RETURNING`; RETURNING's order is
// unspecified, so the backend puts the rows back into the order read. Each claimed row gets its
// own fresh token.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { newJob } from "../contract/helpers.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("sqlite: the claim", () => {
  const opened: SqliteBackend[] = [];
  afterAll(async () => {
    for (const backend of opened) await backend.close();
    removeTempDirs();
  });

  async function open(): Promise<SqliteBackend> {
    const backend = new SqliteBackend({ path: join(tempDir("soniq-sqlite-claim-"), "c.db") });
    opened.push(backend);
    await backend.setup();
    return backend;
  }

  it("returns the claimed rows in claim order with a fresh token each, and skips what is not due", async () => {
    const b = await open();
    const now = await b.now();
    // Inserted out of claim order: priorities and due times shuffled, plus one not due yet.
    const jobs = Array.from({ length: 60 }, (_, i) =>
      newJob({
        priority: (i * 7) % 5,
        runAt: new Date(now.getTime() - 60_000 + ((i * 13) % 17) * 1000),
      }),
    );
    const later = newJob({ priority: -10, delaySeconds: 3600 });
    await b.jobEnqueue({ jobs: [...jobs, later] });

    const first = await b.jobClaim({ workerId: "w", queues: null, limit: 25 });
    const rest = await b.jobClaim({ workerId: "w", queues: ["default"], limit: 100 });
    const claimed = [...first, ...rest];
    expect(first).toHaveLength(25);
    expect(claimed).toHaveLength(60);
    const key = (j: { priority: number; scheduledAt: Date; createdAt: Date; id: string }) =>
      [j.priority, j.scheduledAt.getTime(), j.createdAt.getTime(), j.id] as const;
    const sorted = [...claimed].sort((x, y) => {
      const [a, c] = [key(x), key(y)];
      return a[0] - c[0] || a[1] - c[1] || a[2] - c[2] || (a[3] < c[3] ? -1 : a[3] > c[3] ? 1 : 0);
    });
    // Within each claim, claim order; and the first claim took the first 25 of the whole set.
    expect(first.map((j) => j.id)).toEqual(sorted.slice(0, 25).map((j) => j.id));
    expect(rest.map((j) => j.id)).toEqual(sorted.slice(25).map((j) => j.id));
    expect(claimed.map((j) => j.id)).not.toContain(later.id);
    for (const job of claimed) expect(job.claimToken).toMatch(UUID_V4);
    expect(new Set(claimed.map((j) => j.claimToken)).size).toBe(60);
    const row = await b.jobGet({ id: first[0]?.id ?? "" });
    expect(row).toMatchObject({ status: "processing", workerId: "w", attempts: 0 });
    expect(row?.claimToken).toBe(first[0]?.claimToken);
  });

  it("claims a limited queue within its room, after the unrestricted rows", async () => {
    const b = await open();
    await b.admin.queueSet({ name: "limited", maxRunning: 2 });
    await b.jobEnqueue({
      jobs: [
        ...Array.from({ length: 5 }, () => newJob({ queue: "limited", priority: -1 })),
        ...Array.from({ length: 3 }, () => newJob({ queue: "free", priority: 5 })),
      ],
    });
    const claimed = await b.jobClaim({ workerId: "w", queues: null, limit: 10 });
    expect(claimed.map((j) => j.queue)).toEqual(["free", "free", "free", "limited", "limited"]);
    expect(await b.jobClaim({ workerId: "w", queues: ["limited"], limit: 10 })).toEqual([]);
  });
});
