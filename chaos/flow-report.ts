/**
 * The checks of a chaos run's flow-limited jobs (`chaos.limited`, docs/flow-control.md), from the
 * run log (chaos/runlog.ts: each handler run's start and end, per job) and the record of faults,
 * recoveries and worker exits.
 *
 * Must be zero: moments when more handler runs of one key were running than its concurrency
 * limit. A run counts from its start until the first of: its recorded end; its process's exit
 * (a SIGKILL'd run stays open in the log); a SIGSTOP beyond the stale window that froze its
 * process (the process runs nothing until SIGCONT, and by then recovery has requeued the job, so
 * the database no longer counts the row); a recovery of its job (the row left `processing`). A
 * run is inside its row's `processing` time (it starts after the claim and records its end before
 * the outcome is written), so no count here can exceed the database's; a stale run cut at a
 * recovery is under-counted, never over-counted.
 *
 * Also shown: the most handler starts of a key in any window of the rate limit. Handler starts
 * are not claims (a prefetched job starts a little after its claim, which is what the limit
 * counts), so it is information, not a check.
 */
import { LIMITED_CONCURRENCY, LIMITED_RATE, LIMITED_RATE_PER } from "./plan.js";
import type { Check, FaultRecord, RecoveryEvent, WorkerExitRecord } from "./report.js";
import type { RunRow } from "./runlog.js";

/** What the flow checks read. */
export interface FlowInput {
  /** Acknowledged enqueues: id → logical number. */
  enqueued: Map<string, number>;
  /** Flow-limited jobs: logical number → key. */
  limited: Map<number, string>;
  runs: RunRow[];
  faults: FaultRecord[];
  recoveries: RecoveryEvent[];
  exits: WorkerExitRecord[];
}

/** The checks (see the module comment), with details for every failure. */
export function analyzeFlow(input: FlowInput): {
  checks: Check[];
  details: string[];
  failed: string[];
} {
  const checks: Check[] = [];
  const details: string[] = [];
  const keyOfJob = new Map<string, string>();
  for (const [id, n] of input.enqueued) {
    const key = input.limited.get(n);
    if (key !== undefined) keyOfJob.set(id, key);
  }
  const exitAt = new Map<number, number>();
  for (const e of input.exits) exitAt.set(e.pid, Math.min(exitAt.get(e.pid) ?? e.at, e.at));
  const stops = input.faults.filter((f) => f.kind === "sigstop_long" && f.pid !== undefined);
  const recoveriesOf = new Map<string, number[]>();
  for (const r of input.recoveries) {
    recoveriesOf.set(r.jobId, [...(recoveriesOf.get(r.jobId) ?? []), r.at]);
  }

  /** Per key: +1 at a run's start, -1 at its end. */
  const edges = new Map<string, Array<{ at: number; d: 1 | -1; jobId: string }>>();
  let runs = 0;
  for (const r of input.runs) {
    const key = keyOfJob.get(r.jobId);
    if (key === undefined) continue;
    runs += 1;
    const ends = [r.endedAt ?? Number.POSITIVE_INFINITY];
    const exited = exitAt.get(r.pid);
    if (exited !== undefined && exited >= r.startedAt) ends.push(exited);
    for (const s of stops) if (s.pid === r.pid && s.at >= r.startedAt) ends.push(s.at);
    for (const at of recoveriesOf.get(r.jobId) ?? []) if (at >= r.startedAt) ends.push(at);
    const end = Math.min(...ends);
    const list = edges.get(key) ?? [];
    list.push({ at: r.startedAt, d: 1, jobId: r.jobId });
    if (Number.isFinite(end)) list.push({ at: end, d: -1, jobId: r.jobId });
    edges.set(key, list);
  }
  let over = 0;
  let worst = 0;
  for (const [key, list] of edges) {
    // Ends before starts at the same millisecond: a slot freed and taken at once is not two.
    list.sort((a, b) => a.at - b.at || a.d - b.d);
    let running = 0;
    for (const e of list) {
      running += e.d;
      worst = Math.max(worst, running);
      if (e.d === 1 && running > LIMITED_CONCURRENCY) {
        over += 1;
        if (over <= 10)
          details.push(
            `key ${key}: ${running} runs at once at ${new Date(e.at).toISOString()} (job ${e.jobId} started), limit ${LIMITED_CONCURRENCY}`,
          );
      }
    }
  }
  checks.push({
    name: "flow-limited jobs: handler runs / keys / most running of a key at once",
    value: `${runs} / ${edges.size} / ${worst} (limit ${LIMITED_CONCURRENCY})`,
  });
  checks.push({
    name: "running per key above limit (must be 0)",
    value: String(over),
    ok: over === 0,
  });

  let mostStarts = 0;
  const windowMs = LIMITED_RATE_PER * 1000;
  for (const list of edges.values()) {
    const starts = list
      .filter((e) => e.d === 1)
      .map((e) => e.at)
      .sort((a, b) => a - b);
    for (let i = 0, j = 0; i < starts.length; i++) {
      while ((starts[i] as number) - (starts[j] as number) >= windowMs) j++;
      mostStarts = Math.max(mostStarts, i - j + 1);
    }
  }
  checks.push({
    name: `most handler starts of a key in any ${LIMITED_RATE_PER} s (information: the limit counts claims)`,
    value: `${mostStarts} (limit ${LIMITED_RATE})`,
  });
  return { checks, details, failed: checks.filter((c) => c.ok === false).map((c) => c.name) };
}
