/**
 * Per-key concurrency across real worker processes (issue 28 items 1, 5; docs/flow-control.md), on
 * PostgreSQL: three `soniq worker` processes (5 slots each, prefetch on) drain a skewed backlog
 * over 30 keys with a limit of 2 per key while a sampler reads the processing rows per key; one
 * worker gets SIGTERM mid-backlog and drains (its prefetched jobs NACK'd, its keys freed). Checks:
 * the sampler never saw more than 2 processing rows of a key, the SIGTERM'd worker exits 0 and
 * owns no row, every job is done exactly once with attempts 1 (waiting for a key spent nothing).
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { type Running, startCli } from "../helpers/cli.js";
import { prepared, targets, WORKER_READY_TIMEOUT_MS } from "../helpers/e2e-targets.js";
import { waitFor } from "../helpers/wait.js";

const FIXTURE = "test/fixtures/keyed-jobs.ts";
const target = targets.find((t) => t.label === "PostgreSQL");

function startKeyedWorker(env: Record<string, string>): Running & { ready: Promise<unknown> } {
  const worker = startCli(["worker", FIXTURE], env);
  const ready = waitFor(
    () => worker.stderr().includes("worker started"),
    WORKER_READY_TIMEOUT_MS,
    "worker started",
  );
  return { ...worker, ready };
}

const children: Running[] = [];
afterAll(() => {
  for (const c of children) if (c.child.exitCode === null) c.child.kill("SIGKILL");
});

describe.skipIf(!target || target.skip)("per-key concurrency across worker processes", () => {
  it("PostgreSQL › 3 soniq workers, skewed backlog over 30 keys, one SIGTERM'd › never more than 2 per key, all done once, attempts 1", async () => {
    const prep = await prepared(target!, { SONIQ_PREFETCH: "5", SONIQ_CONCURRENCY: "5" });
    const { db } = prep;
    const env: Record<string, string | undefined> = prep.env;
    const keyed = db.job({
      name: "tenant.keyed",
      concurrency: { key: (args: { tenant: string; ms: number }) => args.tenant, limit: 2 },
      handler: async () => undefined,
    });
    const ids: string[] = [];
    for (let n = 0; n < 60; n++) ids.push(await keyed.enqueue({ tenant: "k0", ms: 30 }));
    for (let k = 1; k < 30; k++) {
      for (let n = 0; n < 3; n++) ids.push(await keyed.enqueue({ tenant: `k${k}`, ms: 20 }));
    }
    const pool = new pg.Pool({ connectionString: env.SONIQ_DATABASE_URL, max: 1 });
    const jobs = `"${env.SONIQ_SCHEMA}".soniq_jobs`;
    let sampling = true;
    let worst = 0;
    let samples = 0;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM ${jobs} WHERE status = 'processing'
           GROUP BY meta -> 'concurrency' ->> 'key' ORDER BY 1 DESC LIMIT 1`,
        );
        worst = Math.max(worst, Number(rows[0]?.n ?? 0));
        samples += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const workers = [0, 1, 2].map(() => startKeyedWorker(prep.env));
    children.push(...workers);
    await Promise.all(workers.map((w) => w.ready));
    const doneCount = async () =>
      Number(
        (
          await pool.query<{ n: string }>(
            `SELECT count(*) AS n FROM "${env.SONIQ_SCHEMA}".soniq_finished_jobs WHERE status = 'done'`,
          )
        ).rows[0]?.n ?? 0,
      );
    await waitFor(async () => (await doneCount()) >= 20, 60_000);
    workers[0]!.child.kill("SIGTERM");
    const stopped = await workers[0]!.exited;
    expect(stopped.code, stopped.stderr).toBe(0);
    // The drained worker holds no key's slot: it owns no processing row.
    const owned = await pool.query(
      `SELECT j.id FROM ${jobs} AS j JOIN "${env.SONIQ_SCHEMA}".soniq_workers AS w
       ON w.id = j.worker_id WHERE j.status = 'processing' AND w.stopped_at IS NOT NULL`,
    );
    expect(owned.rows).toEqual([]);
    await waitFor(async () => (await doneCount()) === ids.length, 120_000);
    sampling = false;
    await sampler;
    for (const w of workers.slice(1)) w.child.kill("SIGTERM");
    for (const w of workers.slice(1)) expect((await w.exited).code).toBe(0);
    const { rows } = await pool.query<{ attempts: number; n: string }>(
      `SELECT attempts, count(*) AS n FROM "${env.SONIQ_SCHEMA}".soniq_finished_jobs GROUP BY attempts`,
    );
    await pool.end();
    await db.close();
    expect(samples).toBeGreaterThan(10);
    expect(worst).toBeLessThanOrEqual(2);
    expect(worst).toBe(2);
    expect(rows).toEqual([{ attempts: 1, n: String(ids.length) }]);
  }, 240_000);
});
