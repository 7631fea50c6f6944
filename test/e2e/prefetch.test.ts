/**
 * The prefetch window with real `soniq worker` processes on a SQLite file and on PostgreSQL (issue
 * 17): a poison job among prefetched no-op neighbours, under a supervisor that restarts the worker,
 * reaches crash_loop within maxInterruptions + 2 crashes and charges no neighbour; SIGTERM with a
 * full buffer NACKs it in one statement and exits 0 once the running jobs finish; a worker frozen
 * (SIGSTOP) past the stale window with a full buffer starts none of its buffered rows, whether
 * recovery requeued them meanwhile (the TTL's NACK is fenced out) or nobody did (the TTL's NACK
 * puts them back to queued, attempts untouched). "One statement" is checked in the store: a
 * trigger logs every write that moves rows from processing back to queued.
 */

import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { crashLoopRule } from "../../src/maintenance/policy.js";
import { prepared, startWorker as start, targets } from "../helpers/e2e-targets.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

/** Job ids whose handler ran, from the fixture's run log. */
function runs(path: string): string[] {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
}

/** The JSON log lines of a worker's stderr with `msg` starting with `prefix`. */
function logLines(stderr: string, prefix: string): Array<Record<string, unknown>> {
  return stderr
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return {};
      }
    })
    .filter((entry) => typeof entry.msg === "string" && entry.msg.startsWith(prefix));
}

const RELEASED = "claimed jobs that never started went back to queued";

type E2eDb = Awaited<ReturnType<typeof prepared>>["db"];

/**
 * Waits until every gate job (one per slot, enqueued between the noops and the tail) has started
 * and a row of the tail is held unstarted. The gate jobs log their start and run until the test
 * opens the gate, so from then on every slot is held and no row can start: the worker holds the
 * rest unstarted (its buffer) until the gate opens. A gate that is only claimed is not enough: the
 * buffer is FIFO, and a worker still starting the noops claimed before the gates is caught by the
 * freeze in the middle of a start (docs/shutdown.md, "The claimed-not-yet-running window").
 * The freeze must still come within the start TTL (1.4 s or 2 s below) of the tail's claim, or the
 * worker NACKs the tail first: measured 56–295 ms from the oldest buffered row's claim to the freeze
 * at load average 12–18 on 2 cores (20 runs), a margin of over 1.1 s.
 */
async function waitForTailBuffered(
  db: E2eDb,
  log: string,
  gates: ReadonlySet<string>,
  tail: ReadonlySet<string>,
): Promise<void> {
  await waitFor(
    async () => {
      const ran = new Set(runs(log));
      if ([...gates].some((id) => !ran.has(id))) return false;
      const processing = (await db.jobs.list({ status: "processing" }, { limit: 1000 })).jobs;
      return processing.some((job) => tail.has(job.id) && !ran.has(job.id));
    },
    60_000,
    "the gate jobs running in every slot and a tail row buffered",
  );
}

/**
 * The rows a frozen worker holds unstarted: `processing`, not a gate job, not in the run log (no
 * row can start while the gates hold every slot, so none is half-started). Read after a pause,
 * once the statements it sent before the freeze have landed (a claim in flight).
 */
async function bufferedWhileFrozen(
  db: E2eDb,
  log: string,
  gates: ReadonlySet<string>,
): Promise<string[]> {
  await new Promise((r) => setTimeout(r, 300));
  const processing = (await db.jobs.list({ status: "processing" }, { limit: 1000 })).jobs;
  const ran = new Set(runs(log));
  const buffered = processing.map((job) => job.id).filter((id) => !gates.has(id) && !ran.has(id));
  expect(buffered.length).toBeGreaterThan(0);
  return buffered;
}

/** Workers this file started: a failed test leaves none running (or stopped) behind it. */
const workers: Array<ReturnType<typeof start>> = [];
afterEach(() => {
  for (const w of workers.splice(0)) {
    if (w.child.exitCode !== null || w.child.signalCode !== null) continue;
    w.child.kill("SIGCONT");
    w.child.kill("SIGKILL");
  }
});

/** `soniq worker` on the fixture (e2e-targets.ts), killed after the test if still alive. */
function startWorker(env: Record<string, string>) {
  const w = start(env);
  workers.push(w);
  return w;
}

/**
 * Records, in the store itself, every write that moves rows from `processing` back to `queued`
 * (a NACK or a recovery), grouped by the statement that made it. PostgreSQL: a statement-level
 * trigger with transition tables logs one entry per statement (exact). SQLite has no statement
 * triggers: a row trigger logs each row with its `updated_at`, which one statement sets to one
 * instant (a per-row write would spread over several); grouped by that instant. The SQLite
 * backend's test (test/sqlite/nack-many.test.ts) counts the statement itself at the driver.
 * @returns `read()`: the id groups, largest first.
 */
async function recordRequeues(env: Record<string, string>) {
  const url = env.SONIQ_DATABASE_URL ?? "";
  if (url.startsWith("sqlite:")) {
    const path = url.slice("sqlite:".length);
    const db = new Database(path);
    db.exec(`CREATE TABLE test_requeues (id TEXT NOT NULL, at INTEGER NOT NULL);
      CREATE TRIGGER test_requeues AFTER UPDATE OF status ON soniq_jobs
      WHEN OLD.status = 'processing' AND NEW.status = 'queued'
      BEGIN INSERT INTO test_requeues VALUES (NEW.id, NEW.updated_at); END;`);
    db.close();
    return {
      read(): string[][] {
        const reader = new Database(path, { readonly: true });
        try {
          const rows = reader.prepare("SELECT id, at FROM test_requeues").all() as Array<{
            id: string;
            at: number;
          }>;
          const groups = new Map<number, string[]>();
          for (const row of rows) groups.set(row.at, [...(groups.get(row.at) ?? []), row.id]);
          // In time order (the writes' millisecond).
          return [...groups.entries()].sort((a, b) => a[0] - b[0]).map(([, ids]) => ids);
        } finally {
          reader.close();
        }
      },
    };
  }
  const schema = `"${env.SONIQ_SCHEMA}"`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE TABLE ${schema}.test_requeues (n bigserial, ids uuid[] NOT NULL);
      CREATE FUNCTION ${schema}.test_requeues() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO ${schema}.test_requeues (ids)
        SELECT array_agg(n.id) FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE o.status = 'processing' AND n.status = 'queued' HAVING count(*) > 0;
        RETURN NULL;
      END $$;
      CREATE TRIGGER test_requeues AFTER UPDATE ON ${schema}.soniq_jobs
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.test_requeues();`);
  } finally {
    await client.end();
  }
  return {
    async read(): Promise<string[][]> {
      const reader = new pg.Client({ connectionString: url });
      await reader.connect();
      try {
        const { rows } = await reader.query<{ ids: string[] }>(
          `SELECT ids::text[] AS ids FROM ${schema}.test_requeues ORDER BY n`,
        );
        return rows.map((row) => row.ids); // in statement order
      } finally {
        await reader.end();
      }
    },
  };
}

const items = (name: string, n: number, args: object = {}) =>
  Array.from({ length: n }, () => ({ name, args }));

/**
 * SIGSTOPs `child`. On a SQLite file, first takes the write lock on a connection of its own, so
 * the child is stopped while not holding it (a process stopped inside a write transaction stalls
 * every writer of the file, and this test writes during the stop), then releases it.
 */
function stopOutsideWriteLock(child: ChildProcess, env: Record<string, string>): void {
  const url = env.SONIQ_DATABASE_URL ?? "";
  if (!url.startsWith("sqlite:")) {
    child.kill("SIGSTOP");
    return;
  }
  const lock = new Database(url.slice("sqlite:".length), { timeout: 30_000 });
  try {
    lock.exec("BEGIN IMMEDIATE");
    child.kill("SIGSTOP");
    lock.exec("COMMIT");
  } finally {
    lock.close();
  }
}

for (const target of targets) {
  describe.skipIf(target.skip)(`prefetch window, real processes, ${target.label}`, () => {
    it("crash accounting › a poison job among prefetched neighbours › crash_loop within maxInterruptions + 2 crashes; every neighbour done, attempts 1, never charged", async () => {
      const { env, db } = await prepared(target, {
        SONIQ_HEARTBEAT_INTERVAL: "0.2",
        SONIQ_HEARTBEAT_TIMEOUT: "1",
        SONIQ_POLL_INTERVAL: "0.1",
        SONIQ_MAX_INTERRUPTIONS: "3",
        SONIQ_PREFETCH: "500",
      });
      const before = await db.enqueueMany(items("e2e.noop", 750));
      const [poison] = await db.enqueueMany(items("e2e.suicide", 1));
      const after = await db.enqueueMany(items("e2e.noop", 750));
      const neighbours = [...before, ...after];
      let crashes = 0;
      while (!(await db.getDeadLetter(poison!)) && crashes < 10) {
        const w = startWorker(env);
        const exit = await Promise.race([
          w.exited,
          waitFor(() => db.getDeadLetter(poison!), 60_000, "dead letter").then(() => null),
        ]);
        if (exit === null) {
          w.child.kill("SIGTERM");
          await w.exited;
          break;
        }
        expect(exit.signal, exit.stderr).toBe("SIGKILL");
        crashes += 1;
      }
      expect(crashes).toBeLessThanOrEqual(3 + 2);
      expect(await db.getDeadLetter(poison!)).toMatchObject({
        reason: "crash_loop",
        attempts: 0,
        interruptions: 4,
      });
      const w = startWorker(env);
      await w.ready;
      await waitFor(async () => (await db.stats()).done === neighbours.length, 60_000, "all done");
      w.child.kill("SIGTERM");
      expect((await w.exited).code).toBe(0);
      const rows = await Promise.all(neighbours.map((id) => db.getJob(id)));
      for (const row of rows) {
        expect(row).toMatchObject({ status: "done", attempts: 1, interruptions: 0 });
      }
      // Some neighbours were held (running, buffered or being acknowledged) by a crashed worker:
      // they came back uncharged.
      expect(rows.some((row) => (row?.unchargedRecoveries ?? 0) > 0)).toBe(true);
      await db.close();
    }, 300_000);

    it("SIGTERM › a full buffer behind busy slots › NACK'd in one statement, running jobs finish, exit 0", async () => {
      const { env, db } = await prepared(target, { SONIQ_PREFETCH: "500" });
      const requeues = await recordRequeues(env);
      await db.enqueueMany(items("e2e.noop", 3000));
      const sleeps = await db.enqueueMany(items("e2e.sleep", 10, { ms: 1500 }));
      await db.enqueueMany(items("e2e.noop", 500));
      const w = startWorker(env);
      await w.ready;
      // Every slot holds a sleep job and rows beyond the 10 slots are `processing`: the buffer.
      await waitFor(
        async () => {
          const rows = await Promise.all(sleeps.map((id) => db.getJob(id)));
          return (
            rows.every((r) => r?.status === "processing") && (await db.stats()).processing > 10
          );
        },
        60_000,
        "the sleeps running and the buffer filled",
      );
      w.child.kill("SIGTERM");
      const exit = await w.exited;
      expect(exit.code, exit.stderr).toBe(0);
      const released = logLines(exit.stderr, RELEASED);
      const drained = released.filter((l) => l.reason === "drain");
      expect(drained).toHaveLength(1); // one write for the whole buffer
      const count = drained[0]?.released as number;
      expect(count).toBeGreaterThan(0);
      // In the store: one statement moved the whole buffer back to queued, and nothing but the
      // logged NACKs (drain, and any row past its TTL) moved a row back.
      const groups = await requeues.read();
      const logged = released.reduce((sum, l) => sum + (l.released as number), 0);
      expect(groups.flat()).toHaveLength(logged);
      // The drain's statement is not always the only requeue: on a loaded machine rows that
      // waited behind the sleeps past the start TTL go back before it (`ttl`, then usually run
      // here), and a claim answered after the drain began goes back after it (`late_claim`).
      // The drain's is the group of its logged size whose rows all stayed queued (SQLite groups
      // by millisecond, so another write in the same one may join it).
      let buffer: string[] | undefined;
      for (const group of groups) {
        if (target.label === "PostgreSQL" ? group.length !== count : group.length < count) continue;
        const rows = await Promise.all(group.map((id) => db.getJob(id)));
        if (rows.every((row) => row?.status === "queued")) buffer = group;
      }
      expect(buffer, "the drain's one statement").toBeDefined();
      for (const id of buffer ?? []) {
        expect(await db.getJob(id)).toMatchObject({
          status: "queued",
          workerId: null,
          attempts: 0,
          interruptions: 0,
          lastError: null,
        });
      }
      for (const id of sleeps) {
        expect(await db.getJob(id)).toMatchObject({ status: "done", attempts: 1 });
      }
      const stats = await db.stats();
      expect(stats.processing).toBe(0);
      expect(stats.done + stats.queued).toBe(3510);
      await db.close();
    }, 120_000);

    it("SIGSTOP › past the stale window with a full buffer, recovery requeues, then SIGCONT › no buffered row is started by the resumed worker", async () => {
      const log = join(tempDir(), "runs.log");
      const { env, db } = await prepared(target, {
        SONIQ_HEARTBEAT_INTERVAL: "0.2",
        // TTL = min(2, (5 − 0.2) / 2) = 2 s: the longest, so the buffer outlives the poll below
        SONIQ_HEARTBEAT_TIMEOUT: "5",
        SONIQ_PREFETCH: "500",
        E2E_RUN_LOG: log,
      });
      const gate = join(tempDir(), "gate");
      await db.enqueueMany(items("e2e.noop", 3000));
      const gates = new Set(await db.enqueueMany(items("e2e.gate", 10, { path: gate })));
      const tail = await db.enqueueMany(items("e2e.noop", 500));
      const w = startWorker(env);
      await w.ready;
      await waitForTailBuffered(db, log, gates, new Set(tail));
      stopOutsideWriteLock(w.child, env);
      const buffered = await bufferedWhileFrozen(db, log, gates);
      const ranBefore = new Set(runs(log));
      const backend = await db.backend();
      // Past the stale window (5 s): recovery requeues every row of the frozen worker, uncharged.
      await db.queues.pause("default"); // so the resumed worker cannot claim them again
      await new Promise((r) => setTimeout(r, 5500));
      const recovered = await backend.jobRecoverStale({
        staleAfterSeconds: 5,
        crashLoop: crashLoopRule(3),
      });
      const requeued = new Set(recovered.requeued.map((job) => job.id));
      for (const id of buffered) expect(requeued.has(id)).toBe(true);
      expect(recovered.requeued.every((job) => !job.charged)).toBe(true);
      // The gate jobs end as soon as the worker runs again: it resumes with free slots.
      writeFileSync(gate, "");
      w.child.kill("SIGCONT");
      // The TTL check refuses the stale buffer (its NACK is fenced out: the rows moved on).
      await waitFor(
        () => logLines(w.stderr(), RELEASED).some((l) => l.reason === "ttl"),
        10_000,
        "the buffered rows refused at their TTL",
      );
      await new Promise((r) => setTimeout(r, 500));
      const startedAfter = runs(log).filter((id) => !ranBefore.has(id) && !gates.has(id));
      expect(startedAfter.filter((id) => buffered.includes(id))).toEqual([]);
      for (const id of buffered) {
        expect(await db.getJob(id)).toMatchObject({
          status: "queued",
          attempts: 0,
          interruptions: 0,
        });
      }
      w.child.kill("SIGTERM");
      await w.exited;
      await db.close();
    }, 120_000);

    it("SIGSTOP › past the stale window with a full buffer, no recovery meanwhile, then SIGCONT › the buffer is NACK'd at its TTL (fresh clock), none of it started", async () => {
      const log = join(tempDir(), "runs.log");
      const { env, db } = await prepared(target, {
        SONIQ_HEARTBEAT_INTERVAL: "0.2",
        SONIQ_HEARTBEAT_TIMEOUT: "3", // TTL = min(2, (3 − 0.2) / 2) = 1.4 s
        SONIQ_PREFETCH: "500",
        E2E_RUN_LOG: log,
      });
      const gate = join(tempDir(), "gate");
      await db.enqueueMany(items("e2e.noop", 3000));
      const gates = new Set(await db.enqueueMany(items("e2e.gate", 10, { path: gate })));
      const tail = await db.enqueueMany(items("e2e.noop", 500));
      const w = startWorker(env);
      await w.ready;
      await waitForTailBuffered(db, log, gates, new Set(tail));
      stopOutsideWriteLock(w.child, env);
      const buffered = await bufferedWhileFrozen(db, log, gates);
      // Rows the worker NACKs go back to queued and stay there: what starts later can only come
      // from the buffer it held when frozen.
      await db.queues.pause("default");
      // Frozen past the stale window (3 s), and so past every buffered row's TTL (1.4 s). Nobody
      // recovers the rows: the resumed worker's own clock must refuse them.
      await new Promise((r) => setTimeout(r, 3500));
      const ranBefore = new Set(runs(log));
      // The gate jobs end as soon as the worker runs again: it resumes with free slots.
      writeFileSync(gate, "");
      w.child.kill("SIGCONT");
      try {
        await waitFor(
          async () => {
            const rows = await Promise.all(buffered.map((id) => db.getJob(id)));
            return rows.every((row) => row?.status === "queued");
          },
          30_000,
          "every buffered row back to queued",
        );
      } catch (err) {
        // Say what the rows and the worker were doing (a CI run once timed out here).
        const rows = await Promise.all(buffered.map((id) => db.getJob(id)));
        const states = rows.map((row) => `${row?.id} ${row?.status} ${row?.workerId}`);
        throw new Error(
          `${String(err)}\nbuffered rows:\n${states.join("\n")}\nworker stderr:\n${w.stderr()}`,
        );
      }
      // The gate jobs finish (done, or requeued had the worker's own maintenance presumed itself
      // dead); then the worker drains and exits, so no start can come later than the check below.
      await waitFor(async () => (await db.stats()).processing === 0, 30_000, "nothing processing");
      w.child.kill("SIGTERM");
      const exit = await w.exited;
      expect(exit.code, exit.stderr).toBe(0);
      const ttl = logLines(exit.stderr, RELEASED).filter((l) => l.reason === "ttl");
      expect(ttl.length, exit.stderr).toBeGreaterThan(0);
      const startedAfter = runs(log).filter((id) => !ranBefore.has(id));
      expect(startedAfter.filter((id) => buffered.includes(id))).toEqual([]);
      for (const id of buffered) {
        expect(await db.getJob(id)).toMatchObject({
          status: "queued",
          workerId: null,
          attempts: 0,
          interruptions: 0,
          lastError: null,
        });
      }
      await db.close();
    }, 120_000);
  });
}
