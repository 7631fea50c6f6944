/**
 * Where a fan-in's time goes, per completion statement (issue 29): the same claims and batched
 * completions (`jobCompleteMany`, `--batch` jobs each) of `--jobs` no-op jobs, once for
 * independent jobs and once for the members of one batch with an onComplete callback, with one
 * completion statement at a time and then `--inflight` at once (the completion batcher's
 * `maxInFlight` is 2). Prints, per case, the mean wall time of a completion statement and the
 * total; on PostgreSQL, with several in flight, also the lock waits seen by sampling
 * pg_stat_activity every 2 ms (`wait_event_type = 'Lock'` among this schema's connections).
 *
 * `--old-ended` (PostgreSQL): each case runs twice, alternating, once with migration 022's
 * `soniq_flow_ended` put back (its per-edge loop; the edges' row trigger of 019 too), to compare
 * the two in the same run; `--variant file.sql` (PostgreSQL) does the same with the SQL of the file
 * run in the probe's schema instead (e.g. an earlier migration's trigger functions); `--repeat N`
 * runs the whole comparison N times.
 *
 *   node --import tsx bench/profile/fanin-finish.ts [--backend pg|sqlite] [--jobs 4000]
 *     [--batch 10] [--inflight 2] [--old-ended | --variant file.sql] [--repeat 1]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { pino } from "pino";
import type { Backend } from "../../src/backends/contract/index.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { Soniq } from "../../src/index.js";

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}
const kind = flag("backend", "pg");
const jobs = Number(flag("jobs", "4000"));
const batch = Number(flag("batch", "10"));
const inflight = Number(flag("inflight", "2"));
const url = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const variantFile = flag("variant", "");

interface Run {
  statements: number;
  statementMs: number;
  wallMs: number;
  lockSamples: number;
  samples: number;
  /** This process's CPU during the completion calls, µs (SQLite: the database's work). */
  cpuUs: number;
}

const migrations = new URL("../../src/backends/postgres/migrations/", import.meta.url);

/** Migration 022's `soniq_flow_ended` and 019's `soniq_flow_settle` with its row trigger. */
function oldEnded(schema: string): string {
  const m022 = readFileSync(new URL("022_flow_ends.sql", migrations), "utf8");
  const m019 = readFileSync(new URL("019_workflows.sql", migrations), "utf8");
  const fn = (text: string, head: string) => {
    const at = text.indexOf(head);
    return text.slice(at, text.indexOf("$$;", text.indexOf("AS $$", at) + 5) + 3);
  };
  return `SET search_path TO "${schema}";
    DROP TRIGGER soniq_flow_settle_ended ON soniq_job_deps;
    ${fn(m022, "CREATE OR REPLACE FUNCTION soniq_flow_ended()")}
    ${fn(m019, "CREATE FUNCTION soniq_flow_settle()")}
    CREATE TRIGGER soniq_flow_settle AFTER UPDATE OF dep_state ON soniq_job_deps
      FOR EACH ROW WHEN (OLD.dep_state IS NULL AND NEW.dep_state IS NOT NULL)
      EXECUTE FUNCTION soniq_flow_settle();`;
}

async function open(old: boolean): Promise<{ backend: Backend; dispose: () => Promise<void> }> {
  if (kind === "pg") {
    const schema = `prof_fanin_${process.pid}`;
    const backend = new PostgresBackend({ connectionString: url, schema, poolSize: 8 });
    await backend.setup();
    if (old) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(
        variantFile === ""
          ? oldEnded(schema)
          : `SET search_path TO "${schema}";\n${readFileSync(variantFile, "utf8")}`,
      );
      await c.end();
    }
    return {
      backend,
      dispose: async () => {
        await backend.close();
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        await c.query(`DROP SCHEMA ${schema} CASCADE`);
        await c.end();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), "soniq-fanin-"));
  const backend = new SqliteBackend({ path: join(dir, "q.db") });
  await backend.setup();
  return {
    backend,
    dispose: async () => {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function measure(members: boolean, old: boolean): Promise<Run> {
  const { backend, dispose } = await open(old);
  const soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
  const child = soniq.job<{ i: number }, void>({ name: "prof.child", handler: () => {} });
  const root = soniq.job<object, void>({ name: "prof.root", handler: () => {} });
  if (members) {
    await soniq.batch({
      jobs: Array.from({ length: jobs }, (_, i) => ({ job: child, args: { i } })),
      onComplete: { job: root, args: {} },
    });
  } else {
    for (let i = 0; i < jobs; i += 1000) {
      await child.enqueueMany(
        Array.from({ length: Math.min(1000, jobs - i) }, (_, k) => ({ args: { i: i + k } })),
      );
    }
  }
  const sampler = kind === "pg" ? new pg.Client({ connectionString: url }) : null;
  await sampler?.connect();
  let sampling = true;
  let samples = 0;
  let lockSamples = 0;
  const schema = `prof_fanin_${process.pid}`;
  const sampled = (async () => {
    while (sampler && sampling) {
      const r = await sampler.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`,
        [schema],
      );
      samples += 1;
      if ((r.rows[0] as { n: number }).n > 0) lockSamples += 1;
      await new Promise((r2) => setTimeout(r2, 2));
    }
  })();
  let statements = 0;
  let statementMs = 0;
  let cpuUs = 0;
  const started = performance.now();
  const lane = async () => {
    for (;;) {
      const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: batch });
      const mine = claimed.filter((j) => j.name === "prof.child");
      if (mine.length === 0) return;
      const t = performance.now();
      const c = process.cpuUsage();
      await backend.jobCompleteMany({
        items: mine.map((j) => ({
          id: j.id,
          owner: { workerId: "w", claimToken: j.claimToken },
          result: null,
        })),
        resultRetentionSeconds: 3600,
      } as never);
      statementMs += performance.now() - t;
      const dc = process.cpuUsage(c);
      cpuUs += dc.user + dc.system;
      statements += 1;
    }
  };
  await Promise.all(Array.from({ length: inflight }, lane));
  const wallMs = performance.now() - started;
  sampling = false;
  await sampled;
  await sampler?.end();
  await soniq.close();
  await dispose();
  return { statements, statementMs, wallMs, lockSamples, samples, cpuUs };
}

const variants =
  process.argv.includes("--old-ended") || variantFile !== "" ? [true, false] : [false];
const repeat = Number(flag("repeat", "1"));
for (let round = 0; round < repeat; round += 1) {
  for (const members of [false, true]) {
    for (const old of variants) {
      const r = await measure(members, old);
      const lock = kind === "pg" ? `, lock waits in ${r.lockSamples}/${r.samples} samples` : "";
      console.log(
        `${kind}${old ? (variantFile === "" ? " (022's loop)" : ` (${variantFile})`) : ""} ${members ? "batch members" : "plain jobs   "} ${jobs} ` +
          `in statements of ${batch}, ${inflight} in flight: ` +
          `${(r.statementMs / r.statements).toFixed(2)} ms per statement, ` +
          `total ${(r.wallMs / 1000).toFixed(2)} s, ${(r.cpuUs / jobs).toFixed(1)} µs CPU per job${lock}`,
      );
    }
  }
}
