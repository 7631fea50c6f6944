/**
 * The checks of a chaos run's checkpointed and stepped jobs (docs/checkpoints.md), from the run
 * log's items, checkpoints and effects (chaos/runlog.ts) and the jobs' final rows.
 *
 * Must be zero: items of a finished walker never processed; items processed again although a
 * checkpoint past them had resolved before the run started ("items repeated beyond the last
 * checkpoint"); effects applied by more than one run (an effect step re-run without an answer);
 * stepped jobs done without their effect. A checkpoint's time is recorded just after it resolved,
 * so a run is only charged with checkpoints known durable before it began (never a false alarm;
 * a checkpoint whose record was lost to a kill is not counted).
 */
import type { Check, JobState } from "./report.js";
import type { ResumeLog, RunRow } from "./runlog.js";

/** What the resume checks read. */
export interface ResumeInput {
  /** Acknowledged enqueues: id → logical number. */
  enqueued: Map<string, number>;
  /** Walkers: logical number → items to walk. */
  walkers: Map<number, number>;
  /** Logical numbers of the stepped jobs. */
  stepped: Set<number>;
  jobs: JobState[];
  runs: RunRow[];
  log: ResumeLog;
  /** The operator step's answers (job ids). */
  operator: { done: string[]; rerun: string[] };
}

/** The checks (see the module comment), with details for every failure. */
export function analyzeResume(input: ResumeInput): {
  checks: Check[];
  details: string[];
  failed: string[];
} {
  const checks: Check[] = [];
  const details: string[] = [];
  const status = new Map(input.jobs.map((j) => [j.id, j.status]));
  const runStart = new Map(input.runs.map((r) => [r.runId, r.startedAt]));
  const walkerIds = new Map<string, number>();
  const steppedIds = new Set<string>();
  for (const [id, n] of input.enqueued) {
    const items = input.walkers.get(n);
    if (items !== undefined) walkerIds.set(id, items);
    if (input.stepped.has(n)) steppedIds.add(id);
  }

  // ---- walkers ----
  const checkpointsOf = new Map<string, Array<{ upto: number; at: number }>>();
  for (const c of input.log.checkpoints) {
    const list = checkpointsOf.get(c.jobId) ?? [];
    list.push({ upto: c.upto, at: c.at });
    checkpointsOf.set(c.jobId, list);
  }
  const seen = new Map<string, Map<number, number>>();
  let beyond = 0;
  let repeated = 0;
  for (const it of input.log.items) {
    const counts = seen.get(it.jobId) ?? new Map<number, number>();
    counts.set(it.item, (counts.get(it.item) ?? 0) + 1);
    seen.set(it.jobId, counts);
    const started = runStart.get(it.runId);
    if (started === undefined) continue;
    let durable = 0;
    for (const c of checkpointsOf.get(it.jobId) ?? []) {
      if (c.at < started && c.upto > durable) durable = c.upto;
    }
    if (it.item < durable) {
      beyond += 1;
      if (beyond <= 10) {
        details.push(
          `walker ${it.jobId}: item ${it.item} processed in run ${it.runId} although a checkpoint up to ${durable} had resolved before that run started`,
        );
      }
    }
  }
  let missing = 0;
  let walkersDone = 0;
  for (const [id, items] of walkerIds) {
    const counts = seen.get(id) ?? new Map<number, number>();
    for (const c of counts.values()) if (c > 1) repeated += c - 1;
    if (status.get(id) !== "done") continue;
    walkersDone += 1;
    for (let i = 0; i < items; i++) {
      if (!counts.has(i)) {
        missing += 1;
        if (missing <= 10) details.push(`walker ${id}: done, but item ${i} was never processed`);
      }
    }
  }
  checks.push({
    name: "walker jobs done / items processed / checkpoints resolved",
    value: `${walkersDone} of ${walkerIds.size} / ${input.log.items.length} / ${input.log.checkpoints.length}`,
  });
  checks.push({
    name: "walker items processed again (after the last checkpoint)",
    value: String(repeated),
  });
  checks.push({
    name: "items repeated beyond the last checkpoint (must be 0)",
    value: String(beyond),
    ok: beyond === 0,
  });
  checks.push({
    name: "items of done walkers never processed (must be 0)",
    value: String(missing),
    ok: missing === 0,
  });

  // ---- stepped jobs ----
  const effectsOf = new Map<string, Set<string>>();
  for (const e of input.log.effects) {
    const runs = effectsOf.get(e.jobId) ?? new Set<string>();
    runs.add(e.runId);
    effectsOf.set(e.jobId, runs);
  }
  let twice = 0;
  let without = 0;
  let steppedDone = 0;
  for (const id of steppedIds) {
    const applied = effectsOf.get(id)?.size ?? 0;
    if (applied > 1) {
      twice += 1;
      details.push(`stepped job ${id}: its effect was applied by ${applied} runs`);
    }
    if (status.get(id) === "done") {
      steppedDone += 1;
      if (applied === 0) {
        without += 1;
        details.push(`stepped job ${id}: done without its effect`);
      }
    }
  }
  checks.push({
    name: "stepped jobs done / frozen and answered by the operator (done / rerun)",
    value: `${steppedDone} of ${steppedIds.size} / ${input.operator.done.length} / ${input.operator.rerun.length}`,
  });
  checks.push({
    name: "effects applied more than once: effect step re-run without an answer (must be 0)",
    value: String(twice),
    ok: twice === 0,
  });
  checks.push({
    name: "stepped jobs done without their effect (must be 0)",
    value: String(without),
    ok: without === 0,
  });
  const failed = checks.filter((c) => c.ok === false).map((c) => c.name);
  return { checks, details, failed };
}
