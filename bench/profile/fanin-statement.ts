/**
 * What one batched completion statement of a fan-in's members costs the database, against the
 * same statement for plain jobs (issue 29): `--jobs` plain jobs and a batch of `--jobs` members
 * with an onComplete callback are claimed, then completed on one connection in statements of
 * `--batch`, a plain one and a members' one alternately, one at a time. Per kind: the median wall
 * time of a statement and the server process's CPU (`/proc`, utime + stime) per job. With
 * `--explain`, a second pass sends auto_explain's plans (nested statements, analyze, buffers) to
 * the session as notices and sums, per statement of the triggers (its first line), the time and
 * the shared buffers it touched, per job.
 *
 *   node --import tsx bench/profile/fanin-statement.ts [--jobs 6000] [--batch 150] [--explain]
 *     [--variant file.sql]   (BENCH_PG_URL: the database, default …/test)
 *
 * `--variant file.sql`: the SQL of the file is run in the probe's schema after its setup (e.g. a
 * trigger function's `CREATE OR REPLACE`), to measure a change before it is a migration.
 */
import { readFileSync } from "node:fs";
import pg from "pg";
import { pino } from "pino";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { buildStatements } from "../../src/backends/postgres/sql.js";
import { Soniq } from "../../src/index.js";

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}
const jobs = Number(flag("jobs", "6000"));
const batch = Number(flag("batch", "150"));
const explain = process.argv.includes("--explain");
const variantFile = flag("variant", "");
/** `--plans`: the plans of one members' statement, printed whole. */
const showPlans = process.argv.includes("--plans");
const url = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `prof_stmt_${process.pid}`;

const backend = new PostgresBackend({ connectionString: url, schema, poolSize: 2 });
await backend.setup();
const soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
const child = soniq.job<{ i: number }, void>({ name: "stmt.child", handler: () => {} });
const plain = soniq.job<{ i: number }, void>({ name: "stmt.plain", handler: () => {} });
const root = soniq.job<object, void>({ name: "stmt.root", handler: () => {} });
const client = new pg.Client({ connectionString: url });
await client.connect();

function cpuOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};

async function pass(withExplain: boolean): Promise<void> {
  await soniq.batch({
    jobs: Array.from({ length: jobs }, (_, i) => ({ job: child, args: { i } })),
    onComplete: { job: root, args: {} },
  });
  for (let i = 0; i < jobs; i += 1000) {
    await plain.enqueueMany(
      Array.from({ length: Math.min(1000, jobs - i) }, (_, k) => ({ args: { i: i + k } })),
    );
  }
  const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: 2 * jobs });
  const members = claimed.filter((j) => j.name === "stmt.child");
  const plains = claimed.filter((j) => j.name === "stmt.plain");
  const completeMany = buildStatements(schema).completeMany;
  const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]
    ?.pid as number;
  const plans: string[] = [];
  const onNotice = (n: { message?: string }) => {
    if (typeof n.message === "string") plans.push(n.message);
  };
  if (withExplain) {
    await client.query("LOAD 'auto_explain'");
    await client.query(`SET auto_explain.log_min_duration = 0;
      SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on;
      SET auto_explain.log_timing = on; SET auto_explain.log_nested_statements = on;
      SET auto_explain.log_level = notice`);
    client.on("notice", onNotice);
  }
  const stats = {
    plain: { ms: [] as number[], cpu: 0, n: 0 },
    member: { ms: [] as number[], cpu: 0, n: 0 },
  };
  const byStatement = { plain: new Map<string, [number, number]>(), member: new Map() };
  for (let at = 0; at < jobs; at += batch) {
    for (const kind of ["plain", "member"] as const) {
      const part = (kind === "plain" ? plains : members).slice(at, at + batch);
      if (part.length === 0) continue;
      plans.length = 0;
      const cpu0 = cpuOf(pid);
      const t0 = performance.now();
      await client.query(completeMany, [
        part.map((j) => j.id).join(","),
        "w",
        part.map((j) => j.claimToken).join(","),
        null,
        3600,
        part.length,
      ]);
      const ms = performance.now() - t0;
      if (showPlans && kind === "member" && at === Math.floor(jobs / batch / 2) * batch) {
        console.log(plans.join("\n----\n"));
      }
      const s = stats[kind];
      s.ms.push(ms);
      s.cpu += cpuOf(pid) - cpu0;
      s.n += part.length;
      for (const plan of plans) {
        const lines = plan.split("\n");
        const query = (lines.find((l) => l.startsWith("Query Text:")) ?? lines[0] ?? "")
          .replace(/\s+/g, " ")
          .slice(0, 90);
        const dur = Number(/duration: ([\d.]+) ms/.exec(plan)?.[1] ?? 0);
        let hits = 0;
        for (const m of plan.matchAll(/shared hit=(\d+)/g)) hits = Math.max(hits, Number(m[1]));
        const was = byStatement[kind].get(query) ?? [0, 0];
        byStatement[kind].set(query, [was[0] + dur, was[1] + hits]);
      }
    }
  }
  client.off("notice", onNotice);
  for (const kind of ["plain", "member"] as const) {
    const s = stats[kind];
    console.log(
      `${withExplain ? "explain " : ""}${kind.padEnd(6)} ${s.n} in statements of ${batch}: median ${median(s.ms).toFixed(2)} ms per statement (${((median(s.ms) * 1000) / batch).toFixed(1)} µs per job), CPU ${((s.cpu * 1000) / s.n).toFixed(1)} µs per job`,
    );
    if (withExplain) {
      const rows = [...byStatement[kind]].sort((a, b) => b[1][0] - a[1][0]);
      for (const [q, [dur, hits]] of rows.slice(0, 14)) {
        console.log(
          `    ${((dur * 1000) / s.n).toFixed(1).padStart(6)} µs/job ${(hits / s.n).toFixed(1).padStart(5)} buf/job  ${q}`,
        );
      }
    }
  }
  // The callback, released by the last member, and whatever the pass left: out of the way.
  await client.query(`DELETE FROM "${schema}".soniq_jobs`);
}

try {
  if (variantFile !== "") {
    await client.query(`SET search_path TO "${schema}"`);
    await client.query(readFileSync(variantFile, "utf8"));
    await client.query("RESET search_path");
  }
  await pass(false);
  await pass(false);
  if (explain) await pass(true);
} finally {
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
  await soniq.close();
}
