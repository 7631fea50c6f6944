/**
 * SIGKILL at every durable write of the finish-and-release step (issue 29 "Tests";
 * docs/workflows.md, "What waiting means"), with real `soniq worker` processes on a SQLite file and
 * on PostgreSQL. Each run: a batch of two members with onComplete, onSuccess and onFailure
 * callbacks, and a dependant enqueued `after` both members. The test finishes the first member
 * itself; a worker started with `FLOW_CRASH_AT` (test/fixtures/flow-kill-jobs.ts) runs the last
 * one and is SIGKILLed before its finishing write, inside it (a test trigger holds the write open
 * for seconds; PostgreSQL checks the dead client every 100 ms, so the statement is aborted), after
 * it committed, or after it claimed a released job. The last member ends done in one variant and
 * dead-lettered in the other.
 *
 * Checks, per run: where the kill landed is what the durable state shows (nothing ended and
 * nothing released before or inside the write; the end and the release together after it); then a
 * successor worker recovers the dead one's claim and finishes: every callback that should run ran
 * exactly once and the others are cancelled, the dependant ran once after both members ended
 * (done) or was dead-lettered `dependency_failed`, and no job of the batch is left waiting.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Soniq } from "../../src/index.js";
import { startCli } from "../helpers/cli.js";
import { prepared, targets, WORKER_READY_TIMEOUT_MS } from "../helpers/e2e-targets.js";
import { runStoreSql } from "../helpers/store-script.js";
import { tempDir } from "../helpers/temp.js";
import type { StoreAddress } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

const FIXTURE = "test/fixtures/flow-kill-jobs.ts";
const POINTS = ["before_finish", "in_finish", "after_finish", "after_release_claim"] as const;
type Point = (typeof POINTS)[number];

const FAST = {
  SONIQ_HEARTBEAT_INTERVAL: "0.2",
  SONIQ_HEARTBEAT_TIMEOUT: "1",
  SONIQ_POLL_INTERVAL: "0.1",
  SONIQ_CONCURRENCY: "4",
};

/**
 * Holds the write that ends an edge open for seconds: a trigger on the counted-down node row
 * (PostgreSQL sleeps 3 s; SQLite counts a 27-million-row join, seconds of CPU).
 */
const SLOW_RELEASE = {
  sqlite: `CREATE TABLE test_slow (x INTEGER);
           WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300)
           INSERT INTO test_slow SELECT x FROM c;
           CREATE TRIGGER test_slow_release AFTER UPDATE ON soniq_flow_nodes
           BEGIN SELECT count(*) FROM test_slow AS a, test_slow AS b, test_slow AS c; END;`,
  postgres: `CREATE FUNCTION test_slow_release() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN PERFORM pg_sleep(3); RETURN NULL; END $$;
             CREATE TRIGGER test_slow_release AFTER UPDATE ON soniq_flow_nodes
             FOR EACH STATEMENT EXECUTE FUNCTION test_slow_release();`,
};
const FAST_RELEASE = {
  sqlite: "DROP TRIGGER test_slow_release; DROP TABLE test_slow;",
  postgres: `DROP TRIGGER test_slow_release ON soniq_flow_nodes;
             DROP FUNCTION test_slow_release();`,
};

const running: Array<ReturnType<typeof startCli>> = [];
afterEach(() => {
  for (const w of running.splice(0)) {
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
  }
});

function lines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
}

/** `waiting` (queued at the far-future instant), a live status, `dead`, a finished one, or `gone`. */
async function stateOf(db: Soniq, id: string): Promise<string> {
  const job = await db.getJob(id);
  if (job?.status === "queued" && job.scheduledAt.getUTCFullYear() === 9999) return "waiting";
  if (job) return job.status;
  return (await db.getDeadLetter(id)) ? "dead" : "gone";
}

/** One run: a fresh store, the kill at `point`, a successor, the checks. */
async function killRun(target: (typeof targets)[number], point: Point, fail: boolean) {
  const dir = tempDir();
  const log = join(dir, "runs.log");
  const marks = join(dir, "marks");
  const prep = await prepared(target, { ...FAST, TEST_RUN_LOG: log });
  const env: Record<string, string> = prep.env;
  const db = prep.db;
  const address: StoreAddress = {
    databaseUrl: env.SONIQ_DATABASE_URL as string,
    ...(env.SONIQ_SCHEMA ? { schema: env.SONIQ_SCHEMA } : {}),
  };
  const batch = await db.batch({
    jobs: [
      { job: "fk.first", args: {} },
      { job: "fk.last", args: { fail }, options: { maxAttempts: 1 } },
    ],
    onComplete: { job: "fk.callback", args: { kind: "complete" } },
    onSuccess: { job: "fk.callback", args: { kind: "success" } },
    onFailure: { job: "fk.callback", args: { kind: "failure" } },
  });
  const [first, last] = batch.ids as [string, string];
  const dependant = await db.enqueue("fk.dependant", {}, { after: [first, last] });
  const { onComplete, onSuccess, onFailure } = batch.callbacks as Record<string, string>;
  // The first member ends here, so the worker's finishing write is the last member's.
  const backend = await db.backend();
  const [claimed] = await backend.jobClaim({
    workerId: "test",
    queues: null,
    limit: 1,
    names: ["fk.first"],
  });
  expect(claimed?.id).toBe(first);
  await backend.jobComplete({
    id: first,
    owner: { workerId: "test", claimToken: claimed!.claimToken },
    result: '"first"',
    resultRetentionSeconds: 3600,
  });
  if (point === "in_finish") await runStoreSql(address, SLOW_RELEASE);

  const killEnv: Record<string, string> = { ...env, FLOW_CRASH_AT: point, TEST_MARK_FILE: marks };
  // PostgreSQL notices the dead client inside the held statement and aborts it.
  if (env.SONIQ_SCHEMA) {
    killEnv.SONIQ_DATABASE_URL = `${env.SONIQ_DATABASE_URL}?options=-c%20client_connection_check_interval%3D100`;
  }
  const doomed = startCli(["worker", FIXTURE], killEnv);
  running.push(doomed);
  const exit = await Promise.race([
    doomed.exited,
    new Promise<null>((resolve) =>
      setTimeout(() => resolve(null), WORKER_READY_TIMEOUT_MS + 30_000),
    ),
  ]);
  expect(exit?.signal, `${point}: the worker was not killed\n${doomed.stderr()}`).toBe("SIGKILL");
  if (point === "in_finish") await runStoreSql(address, FAST_RELEASE);

  // Where the kill landed, as the store shows it.
  const lastState = await stateOf(db, last);
  const depState = await stateOf(db, dependant);
  if (point === "before_finish" || point === "in_finish") {
    expect(lines(marks), point).toEqual(point === "in_finish" ? ["sent"] : []);
    expect(lastState, `${point}: the last member`).toBe("processing");
    expect(depState, `${point}: the dependant`).toBe("waiting");
  } else {
    // After the claim of a released job, the finishing write committed (the release is in it),
    // though its answer may not have reached the wrapper yet: the claim loop can run first.
    if (point === "after_finish") expect(lines(marks), point).toEqual(["sent", "returned"]);
    else expect(lines(marks)[0], point).toBe("sent");
    expect(lastState, `${point}: the last member`).toBe(fail ? "dead" : "done");
    // The end and the release were one write: the dependant is due or already ended.
    expect(depState, `${point}: the dependant`).not.toBe("waiting");
  }

  const successor = startCli(["worker", FIXTURE], env);
  running.push(successor);
  const expected = fail ? ["complete", "failure"] : ["complete", "success"];
  await waitFor(
    async () =>
      (await db.batches.get(batch.id))?.callbacks.every(
        (c) => c.state === "done" || c.state === "cancelled" || c.state === "dead",
      ) && !["waiting", "queued", "processing"].includes(await stateOf(db, dependant)),
    60_000,
    `${point}: the callbacks and the dependant ended`,
  );
  successor.child.kill("SIGTERM");
  expect((await successor.exited).code).toBe(0);

  const runs = lines(log).map((l) => l.split(" "));
  const callbackRuns = runs.filter((r) => r[0] !== "dependant");
  expect(callbackRuns.map((r) => r[0]).sort(), `${point}: callbacks run`).toEqual(expected);
  const ranIds = callbackRuns.map((r) => r[1]);
  expect(new Set(ranIds).size).toBe(ranIds.length);
  for (const r of callbackRuns) expect(r[2]).toBe(fail ? "done,dead" : "done,done");
  const dependantRuns = runs.filter((r) => r[0] === "dependant");
  if (fail) {
    expect(dependantRuns).toEqual([]);
    expect((await db.getDeadLetter(dependant))?.reason).toBe("dependency_failed");
    expect(await stateOf(db, onSuccess as string)).toBe("cancelled");
    expect(await stateOf(db, onFailure as string)).toBe("done");
  } else {
    expect(dependantRuns).toEqual([["dependant", dependant, "done,done"]]);
    expect(await stateOf(db, onFailure as string)).toBe("cancelled");
    expect(await stateOf(db, onSuccess as string)).toBe("done");
  }
  expect(await stateOf(db, onComplete as string)).toBe("done");
  for (const id of Object.values(batch.callbacks)) {
    const row = await db.getJob(id as string);
    if (row?.status === "done") expect(row.attempts).toBe(1);
  }
  const view = await db.batches.get(batch.id);
  expect(view?.counts.pending).toBe(0);
  await db.close();
}

for (const target of targets) {
  describe.skipIf(target.skip)(`finish-and-release under SIGKILL, ${target.label}`, () => {
    for (const point of POINTS) {
      for (const fail of [false, true]) {
        it(`SIGKILL ${point}, the last member ${fail ? "dead-lettered" : "done"} › the state names the point; each callback once, the dependant once or dead-lettered, nothing stranded`, async () => {
          await killRun(target, point, fail);
        }, 180_000);
      }
    }
  });
}
