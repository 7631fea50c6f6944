/**
 * Flow control across several real `soniq worker` processes (issue 28's tests; docs/flow-control.md),
 * on a SQLite file and on PostgreSQL. Issue 28 asks for 10 processes × 5 slots; a 2-core machine
 * runs 4 processes × 5 slots (prefetch 5) well inside the time, so that is what runs here.
 *
 * - **Per-key concurrency, SIGKILL**: 4 workers drain a skewed backlog over 50 keys (limit 2 per
 *   key; one key 150 jobs, nine keys 25, forty keys 3) while a sampler reads the processing rows
 *   per key; one worker is SIGKILL'd mid-backlog. The sampler never sees more than 2 of a key;
 *   crash recovery requeues the dead worker's jobs (their keys' slots free again) and every job
 *   ends `done` exactly once, nothing left queued or processing.
 * - **Fairness**: a one-job tenant enqueued behind a big tenant's backlog (100,000 jobs on
 *   PostgreSQL, 20,000 on SQLite, by batch enqueue) with a limit of 2 starts within a few
 *   seconds (database timestamps), while the big tenant started at most a few claims' worth
 *   meanwhile: the bound of "Fairness: the rule and its bound", not the big backlog's length.
 * - **Rate windows**: 3 workers, 3 tenants × 24 jobs at 3 starts per 0.5 s. Every start the claim
 *   records (a trigger copies each `soniq_rate_starts` row: the database's own instant) leaves at
 *   most 3 starts of a key in any 0.5 s, over the 8 windows each key needs.
 * - **`ctx.rateLimited`**: a handler pauses its key for 10 s; the key's jobs enqueued then are not
 *   started by any of the 3 workers before the pause ends, while another key's jobs run meanwhile.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Running, startCli } from "../helpers/cli.js";
import { prepared, targets, WORKER_READY_TIMEOUT_MS } from "../helpers/e2e-targets.js";
import { type StoreSql, storeSql } from "../helpers/store-sql.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

const FIXTURE = "test/fixtures/flow-processes-jobs.ts";

const children: Running[] = [];
afterAll(() => {
  for (const c of children) if (c.child.exitCode === null) c.child.kill("SIGKILL");
});

/** `n` `soniq worker` processes on the fixture, once each logged "worker started". */
async function startWorkers(n: number, env: Record<string, string>): Promise<Running[]> {
  const workers = Array.from({ length: n }, () => startCli(["worker", FIXTURE], env));
  children.push(...workers);
  await Promise.all(
    workers.map((w) =>
      waitFor(() => w.stderr().includes("worker started"), WORKER_READY_TIMEOUT_MS, "started"),
    ),
  );
  return workers;
}

/** SIGTERMs `workers` and expects each to drain (exit 0). */
async function drainAll(workers: Running[]): Promise<void> {
  for (const w of workers) w.child.kill("SIGTERM");
  for (const w of workers) {
    const exit = await w.exited;
    expect(exit.code, exit.stderr).toBe(0);
  }
}

/** Finished jobs with status `done`. */
async function doneCount(sql: StoreSql): Promise<number> {
  const [row] = await sql.all<{ n: number | string }>(
    `SELECT count(*) AS n FROM ${sql.table("soniq_finished_jobs")} WHERE status = 'done'`,
  );
  return Number(row?.n ?? 0);
}

/** Per-process settings of every test: 5 slots, prefetch 5, fast polls and heartbeats. */
const WORKER_ENV = {
  SONIQ_CONCURRENCY: "5",
  SONIQ_PREFETCH: "5",
  SONIQ_HEARTBEAT_INTERVAL: "0.5",
  SONIQ_HEARTBEAT_TIMEOUT: "5",
};

for (const target of targets) {
  describe.skipIf(target.skip)(`flow control across worker processes on ${target.label}`, () => {
    it(`${target.label} › 4 workers × 5 slots, 50 keys, skewed backlog, one SIGKILL'd › never more than 2 running per key, all done once, nothing stranded`, async () => {
      const { env, db } = await prepared(target, WORKER_ENV);
      const sql = storeSql(env);
      const keyed = db.job({
        name: "flow.keyed",
        concurrency: { key: (args: { tenant: string; ms: number }) => args.tenant, limit: 2 },
        handler: async () => undefined,
      });
      const items: Array<{ args: { tenant: string; ms: number } }> = [];
      for (let n = 0; n < 150; n++) items.push({ args: { tenant: "k0", ms: 60 } });
      for (let k = 1; k < 10; k++) {
        for (let n = 0; n < 25; n++) items.push({ args: { tenant: `k${k}`, ms: 30 } });
      }
      for (let k = 10; k < 50; k++) {
        for (let n = 0; n < 3; n++) items.push({ args: { tenant: `k${k}`, ms: 20 } });
      }
      const ids = await keyed.enqueueMany(items);
      let sampling = true;
      let worst = 0;
      let samples = 0;
      const sampler = (async () => {
        while (sampling) {
          const rows = await sql.all<{ n: number | string }>(
            `SELECT count(*) AS n FROM ${sql.table("soniq_jobs")} AS j
             WHERE j.status = 'processing' GROUP BY ${sql.keyOf("j")} ORDER BY 1 DESC LIMIT 1`,
          );
          worst = Math.max(worst, Number(rows[0]?.n ?? 0));
          samples += 1;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      const workers = await startWorkers(4, env);
      await waitFor(async () => (await doneCount(sql)) >= 100, 120_000, "100 jobs done");
      // SIGKILL the process holding the most claimed rows (prefetch included) right now.
      const held = await waitFor(
        async () => {
          const rows = await sql.all<{ pid: number; id: string }>(
            `SELECT w.pid, j.id FROM ${sql.table("soniq_jobs")} AS j
             JOIN ${sql.table("soniq_workers")} AS w ON w.id = j.worker_id
             WHERE j.status = 'processing'`,
          );
          const byPid = new Map<number, string[]>();
          for (const r of rows)
            byPid.set(Number(r.pid), [...(byPid.get(Number(r.pid)) ?? []), r.id]);
          const [pid, ids] = [...byPid].sort((x, y) => y[1].length - x[1].length)[0] ?? [];
          const process = workers.find((w) => w.child.pid === pid);
          return process && ids ? { process, ids } : undefined;
        },
        30_000,
        "a worker process holding claimed rows",
      );
      const victim = held.process;
      victim.child.kill("SIGKILL");
      expect((await victim.exited).signal).toBe("SIGKILL");
      // The dead worker's claimed rows stay processing until recovery requeues them; if their
      // keys' slots stayed taken, those keys would never finish.
      await waitFor(async () => (await doneCount(sql)) === ids.length, 180_000, "all done");
      sampling = false;
      await sampler;
      await drainAll(workers.filter((w) => w !== victim));
      const left = await sql.all<{ n: number | string }>(
        `SELECT count(*) AS n FROM ${sql.table("soniq_jobs")}`,
      );
      const finished = await sql.all<{ id: string; status: string }>(
        `SELECT id, status FROM ${sql.table("soniq_finished_jobs")}`,
      );
      await sql.close();
      await db.close();
      expect(samples).toBeGreaterThan(10);
      expect(worst).toBeLessThanOrEqual(2);
      expect(worst).toBe(2);
      expect(Number(left[0]?.n)).toBe(0);
      expect(finished).toHaveLength(ids.length);
      expect(new Set(finished.map((f) => f.id))).toEqual(new Set(ids));
      expect(finished.every((f) => f.status === "done")).toBe(true);
      // The SIGKILL left claimed rows of limited keys behind; recovery requeued them (their keys'
      // slots free again) and they ran to done like the rest.
      expect(held.ids.length).toBeGreaterThan(0);
      const doneIds = new Set(finished.filter((f) => f.status === "done").map((f) => f.id));
      for (const id of held.ids) expect(doneIds.has(id)).toBe(true);
    }, 300_000);

    it(`${target.label} › a one-job tenant behind a big tenant's backlog › started within the fairness bound`, async () => {
      const { env, db } = await prepared(target, WORKER_ENV);
      const sql = storeSql(env);
      const keyed = db.job({
        name: "flow.keyed",
        concurrency: { key: (args: { tenant: string; ms: number }) => args.tenant, limit: 2 },
        handler: async () => undefined,
      });
      const big = target.label === "PostgreSQL" ? 100_000 : 20_000;
      for (let done = 0; done < big; done += 5000) {
        const batch = Array.from({ length: Math.min(5000, big - done) }, () => ({
          args: { tenant: "big", ms: 20 },
        }));
        await keyed.enqueueMany(batch);
      }
      const workers = await startWorkers(2, env);
      await waitFor(async () => (await doneCount(sql)) >= 20, 120_000, "big running");
      const small = await keyed.enqueue({ tenant: "small", ms: 0 });
      await waitFor(async () => (await db.getJob(small))?.status === "done", 60_000, "small done");
      const finished = sql.table("soniq_finished_jobs");
      const [timing] = await sql.all<{ created: number; started: number }>(
        `SELECT ${sql.ms("created_at")} AS created, ${sql.ms("started_at")} AS started
         FROM ${finished} WHERE id = '${small}'`,
      );
      const [between] = await sql.all<{ n: number | string }>(
        `SELECT count(*) AS n FROM ${finished} AS f
         WHERE ${sql.keyOf("f")} = 'big'
           AND ${sql.ms("f.started_at")} >= ${timing!.created}
           AND ${sql.ms("f.started_at")} < ${timing!.started}`,
      );
      const [bigLeft] = await sql.all<{ n: number | string }>(
        `SELECT count(*) AS n FROM ${sql.table("soniq_jobs")} WHERE status = 'queued'`,
      );
      await drainAll(workers);
      await sql.close();
      await db.close();
      const waited = timing!.started - timing!.created;
      // Behind the backlog in claim order it would wait for tens of thousands of big's jobs at
      // 2 at a time; by the rule it is taken by the next keyed claim with room (2 processes,
      // 10 slots, big holds 2 + prefetch). Generous bounds for a loaded machine.
      const seen = `small waited ${waited} ms; big started ${between?.n} meanwhile`;
      expect(waited, seen).toBeLessThan(15_000);
      expect(Number(between?.n), seen).toBeLessThanOrEqual(20);
      expect(Number(bigLeft?.n)).toBeGreaterThan(big / 2);
    }, 300_000);

    it(`${target.label} › 3 workers, 3 tenants × 24 jobs at 3 starts per 0.5 s › recorded starts per key in any 0.5 s ≤ 3, over 8 windows each`, async () => {
      const { env, db } = await prepared(target, WORKER_ENV);
      const sql = storeSql(env);
      // Every start the claim records, copied with its own expiry (start + 500 ms, the database's
      // clock: statement_timestamp() on PostgreSQL, the claim's Date.now() on SQLite).
      if (sql.kind === "postgres") {
        await sql.exec(`CREATE TABLE ${sql.table("test_rate_audit")} (key text, expires_at timestamptz);
          CREATE FUNCTION ${sql.table("test_rate_audit_fn")}() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN INSERT INTO ${sql.table("test_rate_audit")} VALUES (NEW.key, NEW.expires_at); RETURN NEW; END $$;
          CREATE TRIGGER test_rate_audit AFTER INSERT ON ${sql.table("soniq_rate_starts")}
          FOR EACH ROW EXECUTE FUNCTION ${sql.table("test_rate_audit_fn")}()`);
      } else {
        await sql.exec(`CREATE TABLE test_rate_audit (key TEXT, expires_at INTEGER);
          CREATE TRIGGER test_rate_audit AFTER INSERT ON soniq_rate_starts
          BEGIN INSERT INTO test_rate_audit VALUES (NEW.key, NEW.expires_at); END`);
      }
      const rated = db.job({
        name: "flow.rated",
        rateLimit: { limit: 3, per: 0.5, key: (args: { tenant: string }) => args.tenant },
        handler: async () => undefined,
      });
      const ids = await rated.enqueueMany(
        ["t1", "t2", "t3"].flatMap((tenant) =>
          Array.from({ length: 24 }, () => ({ args: { tenant } })),
        ),
      );
      const workers = await startWorkers(3, env);
      await waitFor(async () => (await doneCount(sql)) === ids.length, 120_000, "all done");
      await drainAll(workers);
      const audit = await sql.all<{ key: string; at: number }>(
        `SELECT key, ${sql.ms("expires_at")} AS at FROM ${sql.table("test_rate_audit")}`,
      );
      const attempts = await sql.all<{ attempts: number }>(
        `SELECT attempts FROM ${sql.table("soniq_finished_jobs")}`,
      );
      await sql.close();
      await db.close();
      expect(attempts.every((a) => Number(a.attempts) === 1)).toBe(true);
      // One recorded start per job (no job was NACK'd or recovered: nothing stopped early).
      expect(audit).toHaveLength(ids.length);
      for (const tenant of ["t1", "t2", "t3"]) {
        const at = audit
          .filter((a) => a.key === tenant)
          .map((a) => Number(a.at))
          .sort((a, b) => a - b);
        expect(at).toHaveLength(24);
        for (let i = 0; i < at.length; i++) {
          const inWindow = at.filter((t) => t >= at[i]! && t < at[i]! + 500).length;
          expect(inWindow, `${tenant} starts in the 0.5 s from start ${i}`).toBeLessThanOrEqual(3);
        }
        // 24 starts at 3 per 0.5 s: the last is at least 7 windows after the first.
        expect(at[23]! - at[0]!).toBeGreaterThanOrEqual(7 * 500);
      }
    }, 240_000);

    it(`${target.label} › a handler's ctx.rateLimited(10000, key) › no worker of 3 starts the key's jobs before the pause ends; another key runs meanwhile`, async () => {
      const { env, db } = await prepared(target, WORKER_ENV);
      const sql = storeSql(env);
      const backoff = db.job({
        name: "flow.backoff",
        concurrency: {
          key: (args: { tenant: string; marker?: string; pauseMs?: number }) => args.tenant,
          limit: 5,
        },
        handler: async () => undefined,
      });
      const workers = await startWorkers(3, env);
      const marker = join(tempDir(), "paused");
      const pauser = await backoff.enqueue({ tenant: "p", marker, pauseMs: 10_000 });
      const pauses = sql.table("soniq_rate_pauses");
      const [pause] = await waitFor(
        async () => {
          const rows = await sql.all<{ until: number }>(
            `SELECT ${sql.ms("until")} AS until FROM ${pauses} WHERE key = 'p'`,
          );
          return rows.length > 0 ? rows : undefined;
        },
        60_000,
        "key p paused",
      );
      const paused = await backoff.enqueueMany(
        Array.from({ length: 10 }, () => ({ args: { tenant: "p" } })),
      );
      const other = await backoff.enqueueMany(
        Array.from({ length: 10 }, () => ({ args: { tenant: "q" } })),
      );
      const all = [pauser, ...paused, ...other];
      await waitFor(async () => (await doneCount(sql)) === all.length, 120_000, "all done");
      await drainAll(workers);
      const rows = await sql.all<{ id: string; key: string; started: number; attempts: number }>(
        `SELECT id, ${sql.keyOf("f")} AS key, ${sql.ms("started_at")} AS started, attempts
         FROM ${sql.table("soniq_finished_jobs")} AS f`,
      );
      await sql.close();
      await db.close();
      const until = Number(pause!.until);
      const ofP = rows.filter((r) => r.key === "p");
      const ofQ = rows.filter((r) => r.key === "q");
      expect(ofP).toHaveLength(11);
      expect(rows.every((r) => Number(r.attempts) === 1)).toBe(true);
      // PostgreSQL's started_at is the claim transaction's start, which may precede the claim
      // statement (that checks the pause) by the keyed-claim lock's wait: 1.5 s of slack, well
      // inside the 10 s pause.
      for (const r of ofP) expect(Number(r.started)).toBeGreaterThan(until - 1500);
      // The workers were claiming meanwhile: the other key's jobs did not wait for the pause.
      expect(Math.min(...ofQ.map((r) => Number(r.started)))).toBeLessThan(until - 1500);
    }, 240_000);
  });
}
