// The upgrade to two job tables (migration 010): a schema made and filled by the previous version
// (migrations 001–009, rows as that version wrote them: every status, dead letters, dedup keys
// held by live and finished jobs, timelines, controls, remote submissions, version 4 and 7 ids)
// is migrated by `setup()` without losing anything; a worker of the previous version is refused
// with a message; the upgrade refuses to run while such a worker is live.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { newJobId } from "../../src/jobs/job-id.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { postgresSchemaBefore } from "../helpers/postgres-schema-before.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
afterAll(() => pool.end());

/** Creates `schema` at the previous version: every migration before 010, recorded as setup does. */
const previousVersion = (schema: string) => postgresSchemaBefore(pool, schema, 10);

describePostgres("postgres: upgrade to live and finished job tables", () => {
  const schemas = usePostgresSchemas();

  it("upgrade › a database filled by the previous version › every job, dead letter, dedup key, event and submission is kept and readable", async () => {
    const schema = schemas.next();
    await previousVersion(schema);
    const t = (name: string) => `"${schema}".${name}`;
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
    const insert = `INSERT INTO ${t("soniq_jobs")} (id, name, queue, args, status, attempts,
        max_attempts, scheduled_at, created_at, started_at, finished_at, worker_id, claim_token,
        result, result_expires_at, dedup_key, meta)
      VALUES ($1, 'old.job', 'q', $2::json, $3, $4, 5, now() + make_interval(secs => $5),
        now() - make_interval(secs => $6), $7, $8, $9, $10::uuid, $11::json, $12, $13, $14::json)`;
    const row = async (
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
      pool.query(insert, [
        id,
        `{"id":"${id}"}`,
        status,
        o.attempts ?? 0,
        o.delay ?? 0,
        o.age ?? 0,
        o.owner ? new Date() : null,
        o.finished ? new Date() : null,
        o.owner ? "old-worker" : null,
        o.owner ? randomUUID() : null,
        o.result ?? null,
        o.expires === undefined ? null : new Date(Date.now() + o.expires * 1000),
        o.key ?? null,
        id === ids.queued ? '{"schedule":"s"}' : null,
      ]);
    await row(ids.legacyQueued, "queued", { age: 30, delay: 3600 });
    await row(ids.legacyDone, "done", {
      age: 20,
      attempts: 1,
      finished: true,
      result: '"old"',
      expires: 3600,
    });
    await row(ids.queued, "queued", { age: 5, key: "live-key" });
    await row(ids.delayed, "queued", { age: 4, delay: 3600 });
    await row(ids.processing, "processing", { age: 3, owner: true });
    await row(ids.done, "done", {
      age: 2,
      attempts: 1,
      finished: true,
      result: '{"v":1}',
      expires: 3600,
      key: "done-key",
    });
    await row(ids.doneExpired, "done", {
      age: 2,
      attempts: 1,
      finished: true,
      expires: -60,
      key: "expired-key",
    });
    await row(ids.cancelled, "cancelled", { age: 1, finished: true, expires: 3600 });
    await row(ids.remote, "processing", { age: 1, owner: false });
    await pool.query(
      `INSERT INTO ${t("soniq_dead_letter_jobs")} (id, name, queue, args, priority, attempts,
         max_attempts, scheduled_at, created_at, updated_at, last_error, dedup_key, reason)
       VALUES ($1, 'old.job', 'q', '{}', 0, 5, 5, now(), now(), now(), 'boom', 'dead-key', 'max_attempts_exceeded')`,
      [ids.dead],
    );
    await pool.query(
      `INSERT INTO ${t("soniq_job_events")} (job_id, kind, attempt, detail) VALUES ($1, 'retry', 1, 'e1')`,
      [ids.done],
    );
    await pool.query(
      `INSERT INTO ${t("soniq_job_controls")} (job_id, progress, progress_message) VALUES ($1, 0.5, 'half')`,
      [ids.processing],
    );
    await pool.query(
      `INSERT INTO ${t("soniq_remote_submissions")} (job_id, job_name, queue, phase, task_id, due_at)
       VALUES ($1, 'old.job', 'q', 'accepted', 'tsk_1', now() + interval '1 hour')`,
      [ids.remote],
    );
    // A worker of the previous version, stopped: the upgrade may run.
    await pool.query(
      `INSERT INTO ${t("soniq_workers")} (id, hostname, pid, concurrency, status, stopped_at)
       VALUES ('old-worker', 'h', 1, 1, 'stopped', now())`,
    );

    const b = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });
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

      // Dedup keys: a live job's and a done job's are still held; an expired one is free.
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
      expect(dead?.inserted).toBe(true); // a dead letter never held its key

      // Listing: time-ordered ids newest first, then the two version 4 rows by creation time.
      const listed = (await b.admin.jobList({ filter: {}, limit: 100 })).items.map((j) => j.id);
      expect(listed.slice(-2)).toEqual([ids.legacyDone, ids.legacyQueued]);
      expect(listed).toHaveLength(11);

      // The old worker's processing row is still recovered as before.
      const recovered = await b.jobRecoverStale({
        staleAfterSeconds: 60,
        crashLoop: { maxInterruptions: 5, reason: "crash_loop", message: "loop" },
      });
      expect(recovered.requeued.map((r) => r.id)).toEqual([ids.processing]);

      // A worker of the previous version (no schema version) is refused, with a message.
      const refused = await pool
        .query(
          `INSERT INTO ${t("soniq_workers")} (id, hostname, pid, queues, concurrency, status, started_at, last_heartbeat_at, stopped_at)
           VALUES ('older', 'h', 2, NULL, 1, 'running', now(), now(), NULL)`,
        )
        .catch((e: unknown) => e);
      expect(String(refused)).toMatch(
        /upgraded by soniq setup to schema version 10.*upgrade the worker/,
      );
      // An old worker that was stopped through the upgrade is refused at its next heartbeat.
      const beat = await pool
        .query(`UPDATE ${t("soniq_workers")} SET last_heartbeat_at = now(), status = 'running'
                WHERE id = 'old-worker'`)
        .catch((e: unknown) => e);
      expect(String(beat)).toMatch(/upgrade the worker/);
      // This version registers and heartbeats.
      await b.workerRegister({ id: "new", hostname: "h", pid: 3, queues: null, concurrency: 1 });
      await b.workerHeartbeat({ workerId: "new", status: "running" });
      // The previous version's enqueue (its statement, as it wrote it) still works; a key a live
      // job of either version holds is refused by the live table's unique index.
      const oldEnqueue = `INSERT INTO ${t("soniq_jobs")} (id, name, queue, args, priority, max_attempts,
          scheduled_at, dedup_key) VALUES ($1, 'old.job', 'q', '{}', 0, 5, now(), $2)
        ON CONFLICT (dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING RETURNING id`;
      expect((await pool.query(oldEnqueue, [newJobId(), null])).rowCount).toBe(1);
      expect((await pool.query(oldEnqueue, [newJobId(), "live-key"])).rowCount).toBe(0);
      const oldKeyed = newJobId();
      expect((await pool.query(oldEnqueue, [oldKeyed, "old-key"])).rowCount).toBe(1);
      // This version, meeting a key only that old job holds, answers it as the holder.
      const [meets] = await b.jobEnqueue({ jobs: [dup("old-key")] });
      expect(meets).toEqual({ id: oldKeyed, inserted: false });
    } finally {
      await b.close();
    }
  });

  it("upgrade › a worker of the previous version is live › setup refuses, names it, and changes nothing", async () => {
    const schema = schemas.next();
    await previousVersion(schema);
    await pool.query(
      `INSERT INTO "${schema}".soniq_workers (id, hostname, pid, concurrency) VALUES ('busy-worker', 'h', 1, 1)`,
    );
    const b = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });
    try {
      const err = await b.setup().catch((e: unknown) => e);
      expect(String(err)).toMatch(
        /workers of the previous version are still running \(busy-worker\)/,
      );
      const { rows } = await pool.query(
        `SELECT max(version) AS v FROM "${schema}".soniq_migrations`,
      );
      expect(rows[0]?.v).toBe(9);
      await pool.query(`UPDATE "${schema}".soniq_workers SET status = 'stopped'`);
      await b.setup();
      expect(await b.jobStats()).toMatchObject({ total: 0 });
    } finally {
      await b.close();
    }
  });
});
