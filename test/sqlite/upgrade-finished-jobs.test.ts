// The upgrade to two job tables (SQLite migration 008): a file made and filled by the previous
// version (migrations 001–007, rows as that version wrote them: every status, dead letters,
// dedup keys held by live and finished jobs, timelines, controls, remote submissions, version 4
// and 7 ids) is migrated by `setup()` without losing anything; a worker of the previous version
// is refused with a message; the upgrade refuses to run while such a worker is live.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/backends/shared/migrations.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { newJobId } from "../../src/jobs/job-id.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

/** A file at the previous version: every migration before 008, recorded as setup does. */
function previousVersion(): { path: string; db: Database.Database } {
  const path = join(tempDir("soniq-sqlite-upgrade-"), "old.db");
  const db = new Database(path);
  db.exec(`CREATE TABLE soniq_migrations (version INTEGER NOT NULL PRIMARY KEY,
    name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
  for (const m of loadMigrations("sqlite").filter((m) => m.version < 8)) {
    db.exec(m.sql);
    db.prepare("INSERT INTO soniq_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
      m.version,
      m.name,
      Date.now(),
    );
  }
  return { path, db };
}

describe("sqlite: upgrade to live and finished job tables", () => {
  afterAll(() => removeTempDirs());

  it("upgrade › a file filled by the previous version › every job, dead letter, dedup key, event and submission is kept and readable", async () => {
    const { path, db } = previousVersion();
    const now = Date.now();
    const ids = {
      queued: newJobId(),
      delayed: newJobId(),
      processing: newJobId(),
      done: newJobId(),
      doneExpired: newJobId(),
      cancelled: newJobId(),
      legacyDone: randomUUID(),
      legacyQueued: randomUUID(),
      dead: newJobId(),
      remote: newJobId(),
    };
    const insert = db.prepare(`INSERT INTO soniq_jobs (id, name, queue, args, status, attempts,
        max_attempts, scheduled_at, created_at, updated_at, started_at, finished_at, worker_id,
        claim_token, result, result_expires_at, dedup_key, meta)
      VALUES (?, 'old.job', 'q', ?, ?, ?, 5, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    const row = (
      id: string,
      status: string,
      o: {
        attempts?: number;
        delay?: number;
        age?: number;
        owner?: boolean;
        finished?: boolean;
        result?: string;
        expires?: number;
        key?: string;
      } = {},
    ) =>
      insert.run(
        id,
        `{"id":"${id}"}`,
        status,
        o.attempts ?? 0,
        now + (o.delay ?? 0) * 1000,
        now - (o.age ?? 0) * 1000,
        now,
        o.owner ? now : null,
        o.finished ? now : null,
        o.owner ? "old-worker" : null,
        o.owner ? randomUUID() : null,
        o.result ?? null,
        o.expires === undefined ? null : now + o.expires * 1000,
        o.key ?? null,
        id === ids.queued ? '{"schedule":"s"}' : null,
      );
    row(ids.legacyQueued, "queued", { age: 30, delay: 3600 });
    row(ids.legacyDone, "done", {
      age: 20,
      attempts: 1,
      finished: true,
      result: '"old"',
      expires: 3600,
    });
    row(ids.queued, "queued", { age: 5, key: "live-key" });
    row(ids.delayed, "queued", { age: 4, delay: 3600 });
    row(ids.processing, "processing", { age: 3, owner: true });
    row(ids.done, "done", {
      age: 2,
      attempts: 1,
      finished: true,
      result: '{"v":1}',
      expires: 3600,
      key: "done-key",
    });
    row(ids.doneExpired, "done", {
      age: 2,
      attempts: 1,
      finished: true,
      expires: -60,
      key: "expired-key",
    });
    row(ids.cancelled, "cancelled", { age: 1, finished: true, expires: 3600 });
    row(ids.remote, "processing", { age: 1 });
    db.prepare(`INSERT INTO soniq_dead_letter_jobs (id, name, queue, args, priority, attempts,
        max_attempts, scheduled_at, created_at, updated_at, last_error, dedup_key, reason, dead_at)
      VALUES (?, 'old.job', 'q', '{}', 0, 5, 5, ?, ?, ?, 'boom', 'dead-key', 'max_attempts_exceeded', ?)`).run(
      ids.dead,
      now,
      now,
      now,
      now,
    );
    db.prepare(
      "INSERT INTO soniq_job_events (job_id, at, kind, attempt, detail) VALUES (?, ?, 'retry', 1, 'e1')",
    ).run(ids.done, now);
    db.prepare(
      "INSERT INTO soniq_job_controls (job_id, progress, progress_message) VALUES (?, 0.5, 'half')",
    ).run(ids.processing);
    db.prepare(`INSERT INTO soniq_remote_submissions (job_id, job_name, queue, phase, task_id, due_at,
        updated_at) VALUES (?, 'old.job', 'q', 'accepted', 'tsk_1', ?, ?)`).run(
      ids.remote,
      now + 3_600_000,
      now,
    );
    db.prepare(`INSERT INTO soniq_workers (id, hostname, pid, concurrency, status, started_at,
        last_heartbeat_at, stopped_at) VALUES ('old-worker', 'h', 1, 1, 'stopped', ?, ?, ?)`).run(
      now,
      now,
      now,
    );
    db.close();

    const b = new SqliteBackend({ path });
    try {
      await b.setup();
      expect(await b.jobStats()).toEqual({
        total: 10,
        queued: 3,
        processing: 2,
        done: 3,
        cancelled: 1,
        deadLetter: 1,
      });
      expect(await b.jobGet({ id: ids.done })).toMatchObject({
        status: "done",
        result: '{"v":1}',
        attempts: 1,
      });
      expect(await b.jobGet({ id: ids.legacyDone })).toMatchObject({
        status: "done",
        result: '"old"',
      });
      expect(await b.jobGet({ id: ids.queued })).toMatchObject({
        status: "queued",
        meta: '{"schedule":"s"}',
      });
      expect(await b.jobGet({ id: ids.cancelled })).toMatchObject({ status: "cancelled" });
      expect(await b.deadLetterGet({ id: ids.dead })).toMatchObject({
        reason: "max_attempts_exceeded",
      });
      expect((await b.admin.jobEventsList({ jobId: ids.done })).map((e) => e.detail)).toEqual([
        "e1",
      ]);
      expect(await b.admin.jobDetail({ id: ids.processing })).toMatchObject({ progress: 0.5 });
      expect(await b.submissions.submissionGet({ jobId: ids.remote })).toMatchObject({
        phase: "accepted",
        taskId: "tsk_1",
        jobStatus: "processing",
      });

      const dup = (key: string) => ({
        id: newJobId(),
        name: "old.job",
        queue: "q",
        args: "{}",
        priority: 0,
        maxAttempts: 5,
        runAt: null,
        delaySeconds: 3600,
        dedupKey: key,
      });
      const [live, done, expired, dead] = await b.jobEnqueue({
        jobs: [dup("live-key"), dup("done-key"), dup("expired-key"), dup("dead-key")],
      });
      expect(live).toEqual({ id: ids.queued, inserted: false });
      expect(done).toEqual({ id: ids.done, inserted: false });
      expect(expired?.inserted).toBe(true);
      expect(dead?.inserted).toBe(true);

      const listed = (await b.admin.jobList({ filter: {}, limit: 100 })).items.map((j) => j.id);
      expect(listed.slice(-2)).toEqual([ids.legacyDone, ids.legacyQueued]);
      expect(listed).toHaveLength(11);

      const recovered = await b.jobRecoverStale({
        staleAfterSeconds: 60,
        crashLoop: { maxInterruptions: 5, reason: "crash_loop", message: "loop" },
      });
      expect(recovered.requeued.map((r) => r.id)).toEqual([ids.processing]);

      await b.workerRegister({ id: "new", hostname: "h", pid: 3, queues: null, concurrency: 1 });
    } finally {
      await b.close();
    }
    // A worker of the previous version (no schema version) is refused, with a message.
    const raw = new Database(path);
    try {
      expect(() =>
        raw
          .prepare(`INSERT INTO soniq_workers (id, hostname, pid, queues, concurrency, status,
              started_at, last_heartbeat_at, stopped_at) VALUES ('older', 'h', 2, NULL, 1, 'running', 1, 1, NULL)`)
          .run(),
      ).toThrow(/upgraded by soniq setup to schema version 8.*upgrade the worker/);
      // An old worker stopped through the upgrade is refused at its next heartbeat too.
      expect(() =>
        raw
          .prepare(
            "UPDATE soniq_workers SET last_heartbeat_at = 2, status = 'running' WHERE id = 'old-worker'",
          )
          .run(),
      ).toThrow(/upgrade the worker/);
    } finally {
      raw.close();
    }
  });

  it("upgrade › a worker of the previous version is live › setup refuses and changes nothing", async () => {
    const { path, db } = previousVersion();
    db.prepare(`INSERT INTO soniq_workers (id, hostname, pid, concurrency, started_at,
        last_heartbeat_at) VALUES ('busy-worker', 'h', 1, 1, ?, ?)`).run(Date.now(), Date.now());
    db.close();
    const b = new SqliteBackend({ path });
    try {
      const err = await b.setup().catch((e: unknown) => e);
      expect(String(err)).toMatch(/stop the workers of the previous version/);
      const raw = new Database(path);
      const version = raw.prepare("SELECT max(version) AS v FROM soniq_migrations").get() as {
        v: number;
      };
      raw.prepare("UPDATE soniq_workers SET status = 'stopped'").run();
      raw.close();
      expect(version.v).toBe(7);
      await b.setup();
      expect(await b.jobStats()).toMatchObject({ total: 0 });
    } finally {
      await b.close();
    }
  });
});
