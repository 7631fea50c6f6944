/**
 * Where the `fanin` workload's time goes in the real worker path (issue 29): the workload's two
 * measurements — a drain of `--jobs` independent no-op jobs and a batch of `--jobs` no-op members
 * with an onComplete callback, `--concurrency` in flight, one in-process worker with the bench's
 * settings — alternated `--repeat` times on one instance, with timestamps of their phases:
 *
 * - `run`: first handler start → last child (or plain job) handler end;
 * - `lag`: last handler end → the end of the completion write that carried the last child (the
 *   one that releases the callback) or the drain's last completion;
 * - `wake`: that write's end → the claim that returned the callback;
 * - `start`: → the callback's handler start; `total`: the workload's own fan-in time.
 *
 * The backend's `jobClaim` and `jobCompleteMany` are wrapped: per measurement, the number of
 * claims and completion writes, their mean and largest time, the rows per claim and per write,
 * and the most completion writes in flight. On PostgreSQL a sampler counts lock waits in
 * `pg_stat_activity` (every 2 ms, this schema's connections).
 *
 * `--variant file.sql` (PostgreSQL): each repeat runs a third measurement, a fan-in with the SQL
 * of the file run in the probe's schema first (e.g. `CREATE OR REPLACE FUNCTION` of a trigger
 * function, to compare a change with the build in the same run); the functions it replaces are
 * put back afterwards (their definitions read before, `pg_get_functiondef`).
 *
 * `--table-reads` (PostgreSQL): after each measurement, waits 11 s (the server processes report
 * their table counters when idle 10 s) and prints the rows read from soniq_flow_nodes and
 * soniq_job_deps during it (sequential scans and index fetches, per job) and the updates of the
 * edges that were heap-only.
 *
 *   node --import tsx bench/profile/fanin-phases.ts [--backend pg|sqlite] [--jobs 10000]
 *     [--concurrency 10] [--repeat 3] [--variant file.sql] [--table-reads]
 *     (BENCH_PG_URL: the database, default …/test)
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { Backend } from "../../src/backends/contract/index.js";
import { Soniq } from "../../src/index.js";

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}
const kind = flag("backend", "pg");
const jobs = Number(flag("jobs", "10000"));
const concurrency = Number(flag("concurrency", "10"));
const repeat = Number(flag("repeat", "3"));
const url = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `prof_phases_${process.pid}`;
const variantFile = flag("variant", "");
const tableReads = process.argv.includes("--table-reads");

interface Call {
  at: number;
  ms: number;
  n: number;
  rows: number;
}

const claims: Call[] = [];
const writes: Call[] = [];
/** The pruner's flow-retention steps (`flowPrune`), which may run during a measurement. */
const prunes: Call[] = [];
let inFlight = 0;
let maxInFlight = 0;
let rootClaimedAt = 0;

function instrument(backend: Backend): void {
  const claim = backend.jobClaim.bind(backend);
  backend.jobClaim = async (params) => {
    const at = performance.now();
    const rows = await claim(params);
    const end = performance.now();
    claims.push({ at, ms: end - at, n: params.limit, rows: rows.length });
    if (rows.some((r) => r.name === "prof.root")) rootClaimedAt = end;
    return rows;
  };
  const flows = backend.flows;
  if (flows) {
    const prune = flows.flowPrune.bind(flows);
    flows.flowPrune = async (params) => {
      const at = performance.now();
      try {
        return await prune(params);
      } finally {
        prunes.push({ at, ms: performance.now() - at, n: params.limit, rows: 0 });
      }
    };
  }
  const complete = backend.jobCompleteMany.bind(backend);
  backend.jobCompleteMany = async (params) => {
    const at = performance.now();
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      return await complete(params);
    } finally {
      inFlight -= 1;
      writes.push({ at, ms: performance.now() - at, n: params.items.length, rows: 0 });
    }
  };
}

function summary(calls: Call[]): string {
  if (calls.length === 0) return "none";
  const ms = calls.map((c) => c.ms).sort((a, b) => a - b);
  const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
  const n = calls.reduce((a, c) => a + c.n, 0) / calls.length;
  const p = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]?.toFixed(2);
  return `${calls.length} × mean ${mean.toFixed(2)} ms (p50 ${p(0.5)}, p90 ${p(0.9)}, max ${p(1)}), ${n.toFixed(1)} items each`;
}

const dir = kind === "sqlite" ? mkdtempSync(join(tmpdir(), "soniq-phases-")) : "";
const soniq = new Soniq({
  databaseUrl: kind === "sqlite" ? `sqlite:${join(dir, "q.db")}` : url,
  schema,
  logLevel: "warn",
});
let starts: number[] = [];
let ends: number[] = [];
let rootStart = 0;
let rootEnd = 0;
let done: () => void = () => undefined;
const child = soniq.job<{ i: number }, void>({
  name: "prof.child",
  handler: () => {
    starts.push(performance.now());
    ends.push(performance.now());
    if (ends.length === jobs) done();
  },
});
const root = soniq.job<object, void>({
  name: "prof.root",
  handler: () => {
    rootStart = performance.now();
    rootEnd = performance.now();
    done();
  },
});
await soniq.setup();
const backend = await soniq.backend();
instrument(backend);

/** utime + stime of a process, in ms (Linux /proc; 0 when gone). */
function cpuOf(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** The client server processes of this database (not this one) and their CPU so far, in ms. */
async function dbCpu(c: pg.Client): Promise<Map<number, number>> {
  const r = await c.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
       AND backend_type = 'client backend'`,
  );
  return new Map(r.rows.map((row) => [row.pid, cpuOf(row.pid)]));
}

async function sample<T>(body: () => Promise<T>): Promise<{ value: T; lock: string }> {
  if (kind !== "pg") return { value: await body(), lock: "" };
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const before = await dbCpu(c);
  const cpu0 = process.cpuUsage();
  let on = true;
  let samples = 0;
  let locked = 0;
  const waits = new Map<string, number>();
  const loop = (async () => {
    while (on) {
      const r = await c.query<{ what: string }>(
        `SELECT a.wait_event || COALESCE(' ' || t.relname, '') AS what
         FROM pg_stat_activity AS a
         LEFT JOIN pg_locks AS l ON l.pid = a.pid AND NOT l.granted
         LEFT JOIN pg_class AS t ON t.oid = l.relation
         WHERE a.wait_event_type = 'Lock' AND a.query LIKE '%' || $1 || '%'`,
        [schema],
      );
      samples += 1;
      if (r.rows.length > 0) locked += 1;
      for (const row of r.rows) waits.set(row.what, (waits.get(row.what) ?? 0) + 1);
      await new Promise((r2) => setTimeout(r2, 2));
    }
  })();
  const reads = async () =>
    (
      await c.query<{ relname: string; seq: number; idx: number; upd: number; hot: number }>(
        `SELECT relname, COALESCE(seq_tup_read, 0)::int AS seq, COALESCE(idx_tup_fetch, 0)::int AS idx,
           n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot
         FROM pg_stat_user_tables
         WHERE schemaname = $1 AND relname IN ('soniq_flow_nodes', 'soniq_job_deps')
         ORDER BY relname`,
        [schema],
      )
    ).rows;
  const readsBefore = tableReads ? await reads() : [];
  try {
    const value = await body();
    const after = await dbCpu(c);
    let db = 0;
    for (const [pid, ms] of after) db += ms - (before.get(pid) ?? 0);
    const own = process.cpuUsage(cpu0);
    on = false;
    await loop;
    let readLine = "";
    if (tableReads) {
      await new Promise((r) => setTimeout(r, 11_000));
      for (const r of await reads()) {
        const b = readsBefore.find((x) => x.relname === r.relname);
        const seq = r.seq - (b?.seq ?? 0);
        const idx = r.idx - (b?.idx ?? 0);
        readLine += `; ${r.relname}: ${(seq / jobs).toFixed(1)} seq + ${(idx / jobs).toFixed(1)} index rows read per job, ${r.hot - (b?.hot ?? 0)} of ${r.upd - (b?.upd ?? 0)} updates HOT`;
      }
    }
    return {
      value,
      lock: `${readLine}, lock waits in ${locked}/${samples} samples${waits.size > 0 ? ` (${[...waits].map(([w, n]) => `${w} ${n}`).join(", ")})` : ""}; CPU per job: database ${((db * 1000) / jobs).toFixed(0)} µs, worker process ${((own.user + own.system) / jobs).toFixed(0)} µs`,
    };
  } finally {
    on = false;
    await loop;
    await c.end();
  }
}

async function once(fanIn: boolean): Promise<string> {
  if (fanIn) {
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
  starts = [];
  ends = [];
  rootStart = 0;
  rootEnd = 0;
  rootClaimedAt = 0;
  claims.length = 0;
  writes.length = 0;
  prunes.length = 0;
  maxInFlight = 0;
  const { value: line, lock } = await sample(async () => {
    const finished = new Promise<void>((resolve) => {
      let left = fanIn ? 2 : 1;
      done = () => {
        left -= 1;
        if (left === 0) resolve();
      };
    });
    const worker = soniq.worker({ concurrency });
    await worker.start();
    await finished;
    // The drain's last completions: wait until every write came back.
    while (writes.reduce((a, w) => a + w.n, 0) < jobs + (fanIn ? 1 : 0)) {
      await new Promise((r) => setTimeout(r, 5));
    }
    await worker.stop();
    const first = starts[0] ?? 0;
    const lastEnd = Math.max(...ends);
    const lastWriteEnd = Math.max(
      ...writes.filter((w) => w.at <= (rootClaimedAt || Infinity)).map((w) => w.at + w.ms),
    );
    const s = (ms: number) => (ms / 1000).toFixed(3);
    const m = (ms: number) => ms.toFixed(0);
    return fanIn
      ? `fan-in: run ${s(lastEnd - first)} s, lag ${m(lastWriteEnd - lastEnd)} ms, wake ${m(rootClaimedAt - lastWriteEnd)} ms, start ${m(rootStart - rootClaimedAt)} ms, total ${s(rootEnd - first)} s`
      : `drain:  run ${s(lastEnd - first)} s, lag ${m(lastWriteEnd - lastEnd)} ms`;
  });
  const childWrites = writes.filter((w) => w.at < (rootClaimedAt || Infinity));
  const first = starts[0] ?? 0;
  const pruneLine = prunes
    .map((p) => `at +${(p.at - first).toFixed(0)} ms for ${p.ms.toFixed(0)} ms`)
    .join(", ");
  return `${line}\n  flow prune steps: ${pruneLine || "none"}\n  claims ${summary(claims)}, rows ${(claims.reduce((a, c) => a + c.rows, 0) / claims.length).toFixed(1)} per claim\n  completion writes ${summary(childWrites)}, at most ${maxInFlight} in flight${lock}`;
}

/**
 * Runs `body` with the variant's SQL applied in the probe's schema, then puts back every function
 * of the schema whose definition the variant changed.
 */
async function withVariant<T>(body: () => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const defs = `SELECT p.proname, pg_get_functiondef(p.oid) AS def FROM pg_proc AS p
    JOIN pg_namespace AS n ON n.oid = p.pronamespace WHERE n.nspname = $1`;
  try {
    const before = new Map(
      (await c.query<{ proname: string; def: string }>(defs, [schema])).rows.map((r) => [
        r.proname,
        r.def,
      ]),
    );
    await c.query(`SET search_path TO ${schema}`);
    await c.query(readFileSync(variantFile, "utf8"));
    try {
      return await body();
    } finally {
      const after = (await c.query<{ proname: string; def: string }>(defs, [schema])).rows;
      for (const r of after) {
        const old = before.get(r.proname);
        if (old !== undefined && old !== r.def) await c.query(old);
      }
    }
  } finally {
    await c.end();
  }
}

try {
  for (let r = 0; r < repeat; r += 1) {
    for (const fanIn of [false, true]) console.log(await once(fanIn));
    if (variantFile !== "" && kind === "pg") {
      console.log(`variant ${variantFile}:`);
      console.log(await withVariant(() => once(true)));
    }
  }
} finally {
  await soniq.close();
  if (kind === "pg") {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
  } else {
    rmSync(dir, { recursive: true, force: true });
  }
}
