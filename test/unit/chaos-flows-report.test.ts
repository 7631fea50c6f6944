/**
 * The chaos run's flow and batch checks (chaos/flows.ts) on a real SQLite file with synthetic
 * run logs: a flow and a batch that ran as planned pass every check; a root that ran before a
 * child's run ended, a callback run twice by a live process, a callback never run, a job left
 * waiting with every dependency ended and a recorded job found nowhere each fail their check —
 * while a second run after a SIGKILLed process's run is explained.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { pino } from "pino";
import { expect, it } from "vitest";
import { analyzeFlows, type FlowRecord } from "../../chaos/flows.js";
import { Soniq } from "../../src/index.js";
import { tempDir } from "../helpers/temp.js";

async function store() {
  const dir = tempDir();
  const url = `sqlite:${join(dir, "soniq.db")}`;
  const soniq = new Soniq({
    databaseUrl: url,
    env: {},
    logger: pino({ level: "silent" }),
    rejectUnknownJobs: false,
  });
  await soniq.setup();
  return { dir, url, soniq };
}

/** Runs every due job of `soniq` to the end (no worker: claim and complete through the store). */
async function runAll(soniq: Soniq): Promise<void> {
  const backend = await soniq.backend();
  for (;;) {
    const jobs = await backend.jobClaim({ workerId: "t", queues: null, limit: 100 });
    if (jobs.length === 0) return;
    for (const j of jobs) {
      await backend.jobComplete({
        id: j.id,
        owner: { workerId: "t", claimToken: j.claimToken },
        result: "1",
        resultRetentionSeconds: 3600,
      });
    }
  }
}

it("chaos flow checks › as planned: all zero; early root, double or missing callback, stranded and lost jobs: each counted", async () => {
  const { dir, url, soniq } = await store();
  const flow = await soniq.flow({
    job: "chaos.flow_root",
    args: { n: 0 },
    children: [
      { job: "chaos.flow_child", args: {} },
      { job: "chaos.flow_child", args: {} },
    ],
  });
  const batch = await soniq.batch({
    jobs: [{ job: "chaos.flow_child", args: {} }],
    onComplete: { job: "chaos.flow_callback", args: {} },
    onSuccess: { job: "chaos.flow_callback", args: {} },
    onFailure: { job: "chaos.flow_callback", args: {} },
  });
  await runAll(soniq);
  const records: FlowRecord[] = [
    { kind: "flow", n: 0, id: flow.id, children: flow.ids.slice(1), failing: -1 },
    {
      kind: "batch",
      n: 1,
      id: batch.id,
      children: [...batch.ids],
      failing: -1,
      callbacks: {
        complete: batch.callbacks.onComplete as string,
        success: batch.callbacks.onSuccess as string,
        failure: batch.callbacks.onFailure as string,
      },
    },
  ];
  const recordsFile = join(dir, "flows.jsonl");
  const logFile = join(dir, "flow-runs.log");
  writeFileSync(recordsFile, records.map((r) => JSON.stringify(r)).join("\n"));
  const [c1, c2] = flow.ids.slice(1) as [string, string];
  const good = [
    `end ${c1} 10 1000`,
    `end ${c2} 10 1100`,
    `root ${flow.id} 10 1200 done,done`,
    `end ${batch.ids[0]} 10 1000`,
    `cbend ${batch.callbacks.onComplete} 10 1300 complete done`,
    `cbend ${batch.callbacks.onSuccess} 10 1300 success done`,
  ];
  const input = { env: { SONIQ_DATABASE_URL: url }, recordsFile, logFile, faults: [], exits: [] };
  writeFileSync(logFile, `${good.join("\n")}\n`);
  const ok = await analyzeFlows(input);
  expect(ok.failed).toEqual([]);

  // A root that began before a child's only run ended; onComplete run twice by a live process
  // (and once more after a SIGKILLed one: explained); onSuccess never run.
  writeFileSync(
    logFile,
    `${[
      `end ${c1} 10 1000`,
      `end ${c2} 10 1500`,
      `root ${flow.id} 10 1200 done,done`,
      `end ${batch.ids[0]} 10 1000`,
      `cbend ${batch.callbacks.onComplete} 10 1300 complete done`,
      `cbend ${batch.callbacks.onComplete} 11 1400 complete done`,
      `cbend ${batch.callbacks.onComplete} 12 1500 complete done`,
    ].join("\n")}\n`,
  );
  const bad = await analyzeFlows({
    ...input,
    exits: [{ label: "w", pid: 11, code: null, signal: "SIGKILL", at: 0, cause: "sigkill" }],
  });
  const value = (name: string) => bad.checks.find((c) => c.name.startsWith(name))?.value;
  expect(value("dependants run before a dependency finished")).toBe("1");
  expect(value("batch callbacks fired twice")).toBe("1");
  expect(value("batch callbacks never fired")).toBe("1");

  // A waiting job whose every edge ended (a release the write missed), and a job found nowhere.
  writeFileSync(logFile, `${good.join("\n")}\n`);
  const stray = await soniq.enqueue("chaos.flow_root", {}, { after: [c1] });
  await soniq.close();
  const db = new Database(url.slice("sqlite:".length));
  db.prepare("UPDATE soniq_jobs SET scheduled_at = 253402300799999 WHERE id = ?").run(stray);
  db.prepare("DELETE FROM soniq_finished_jobs WHERE id = ?").run(c2);
  db.close();
  const broken = await analyzeFlows(input);
  const value2 = (name: string) => broken.checks.find((c) => c.name.startsWith(name))?.value;
  expect(value2("dependants stranded")).toBe("1");
  expect(value2("flow and batch jobs lost")).toBe("1");
});
