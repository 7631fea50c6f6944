/**
 * The remote checks of a chaos run (docs/remote-jobs.md), from each remote job's final state and
 * submission record, the provider's counters (POSTs per idempotency key, tasks) and the workers'
 * log lines.
 *
 * Counted: hand-offs (accepted → polling after a drain or a kill), releases, frozen jobs and how
 * each was resolved (reconcile or the operator step). Must be zero: duplicate POSTs per
 * idempotency key (a second POST is allowed only after a reconcile or an operator answered
 * `notSubmitted` for that job, and then under the same key), jobs POSTed under more than one key,
 * orphaned task ids (a task the provider accepted whose id Soniq never recorded), and remote jobs
 * neither done nor explainable (a dead letter is explained only as `remote_failed` of a task the
 * plan made fail).
 */

import { remoteSpec } from "./remote-workload.js";
import type { Check } from "./report.js";

/** One remote job at the end of the run. */
export interface RemoteJobState {
  id: string;
  n: number;
  name: string;
  /** `queued`, `processing`, `done`, `cancelled`, `dead_letter` or `missing`. */
  status: string;
  deadReason: string | null;
  phase: string | null;
  taskId: string | null;
  generation: number | null;
  owner: string | null;
}

/** The provider's state file: POSTs per key and its tasks. */
export interface RemoteProviderState {
  posts: Array<[string, number]>;
  tasks: Array<{ id: string; key: string }>;
}

/** What the workers logged about remote jobs (chaos/run.ts reads the lines). */
export interface RemoteLogCounts {
  /** `handoff_action` lines: `<action> <reason>` → count (reason deadline, draining or crash). */
  handoffs: Record<string, number>;
  /** Freezes: job id → the reasons it was frozen for (deadline, crash, submit_threw, …). */
  frozen: Map<string, string[]>;
  /** Reconciles that answered `notSubmitted`, per job id. */
  reconcileNotSubmitted: Map<string, number>;
  /** Reconciles that found the task. */
  reconcileAccepted: number;
}

/** Reads the remote lines of one worker log (JSON lines). */
export function countRemoteLines(lines: string[], into: RemoteLogCounts): void {
  for (const line of lines) {
    if (!line.includes('"handoff_action"') && !line.includes("reconciled:")) continue;
    let entry: { msg?: string; job_id?: string; handoff_action?: string };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const msg = entry.msg ?? "";
    if (msg.startsWith("reconciled: not submitted")) {
      const id = entry.job_id ?? "";
      into.reconcileNotSubmitted.set(id, (into.reconcileNotSubmitted.get(id) ?? 0) + 1);
      continue;
    }
    if (msg.startsWith("reconciled: the provider has the task")) {
      into.reconcileAccepted += 1;
      continue;
    }
    if (!entry.handoff_action) continue;
    const id = entry.job_id ?? "";
    const crash = msg.startsWith("recovered a remote job");
    const frozenFor = crash
      ? entry.handoff_action === "freeze"
        ? "crash"
        : undefined
      : /^remote submission frozen \(([^)]+)\)/.exec(msg)?.[1];
    if (frozenFor !== undefined) into.frozen.set(id, [...(into.frozen.get(id) ?? []), frozenFor]);
    // A hand-off line: the worker's at a deadline or drain start, or crash recovery's.
    const reason = crash ? "crash" : /^remote job [a-z ]+ \((deadline|draining)\)/.exec(msg)?.[1];
    if (reason === undefined) continue;
    const key = `${entry.handoff_action} ${reason}`;
    into.handoffs[key] = (into.handoffs[key] ?? 0) + 1;
  }
}

/** Input of {@link analyzeRemote}. */
export interface RemoteAnalysisInput {
  seed: number;
  jobs: RemoteJobState[];
  provider: RemoteProviderState;
  logs: RemoteLogCounts;
  operator: {
    accepted: string[];
    notSubmitted: string[];
    reconcilableLeft: string[];
    refused: string[];
    settleMs: number;
  };
}

/** The remote checks, details and failed check names. */
export function analyzeRemote(input: RemoteAnalysisInput): {
  checks: Check[];
  details: string[];
  failed: string[];
} {
  const checks: Check[] = [];
  const details: string[] = [];
  const byId = new Map(input.jobs.map((j) => [j.id, j]));
  const count = (f: (j: RemoteJobState) => boolean) => input.jobs.filter(f).length;
  checks.push({ name: "remote: jobs enqueued (acknowledged)", value: String(input.jobs.length) });
  checks.push({
    name: "remote: done / dead-lettered remote_failed (planned failures)",
    value: `${count((j) => j.status === "done")} / ${count((j) => j.deadReason === "remote_failed")}`,
  });
  const h = input.logs.handoffs;
  const sumOf = (action: string) =>
    Object.entries(h)
      .filter(([k]) => k.startsWith(`${action} `))
      .reduce((n, [, v]) => n + v, 0);
  const byReason = (action: string) =>
    ["deadline", "draining", "crash"].map((r) => h[`${action} ${r}`] ?? 0).join(" / ");
  checks.push({
    name: "remote: hand-offs accepted → polling (deadline / draining / crash)",
    value: `${sumOf("handoff")} (${byReason("handoff")})`,
  });
  checks.push({
    name: "remote: releases, claimed not submitted (deadline / draining / crash)",
    value: `${sumOf("release")} (${byReason("release")})`,
  });
  const reasons = new Map<string, number>();
  let freezes = 0;
  for (const list of input.logs.frozen.values())
    for (const r of list) {
      freezes += 1;
      reasons.set(r, (reasons.get(r) ?? 0) + 1);
    }
  checks.push({
    name: "remote: jobs frozen / freezes (by reason)",
    value: `${input.logs.frozen.size} / ${freezes}${freezes ? ` (${[...reasons].map(([r, n]) => `${n} ${r}`).join(", ")})` : ""}`,
  });
  const reconcileNot = [...input.logs.reconcileNotSubmitted.values()].reduce((a, b) => a + b, 0);
  checks.push({
    name: "remote: frozen resolved by reconcile: accepted / notSubmitted",
    value: `${input.logs.reconcileAccepted} / ${reconcileNot}`,
  });
  const op = input.operator;
  checks.push({
    name: "remote: operator step (admin API): accepted / notSubmitted",
    value: `${op.accepted.length} / ${op.notSubmitted.length}${op.reconcilableLeft.length ? ` (${op.reconcilableLeft.length} with reconcile still frozen at the bound)` : ""}${op.refused.length ? `; ${op.refused.length} refused` : ""}`,
  });
  for (const r of op.refused) details.push(`remote: operator resolution refused: ${r}`);

  // Duplicate POSTs: per key, beyond the first, each needs a notSubmitted answer for the job.
  const operatorNot = new Set(op.notSubmitted);
  let duplicates = 0;
  let allowedSeconds = 0;
  const keysByJob = new Map<string, string[]>();
  for (const [key, n] of input.provider.posts) {
    const jobId = key.slice(0, key.lastIndexOf(":"));
    keysByJob.set(jobId, [...(keysByJob.get(jobId) ?? []), key]);
    const allowance =
      (input.logs.reconcileNotSubmitted.get(jobId) ?? 0) + (operatorNot.has(jobId) ? 1 : 0);
    const extra = Math.max(0, n - 1);
    const dup = Math.max(0, extra - allowance);
    allowedSeconds += extra - dup;
    duplicates += dup;
    if (dup > 0)
      details.push(
        `remote: duplicate POST: ${n} under ${key} with ${allowance} notSubmitted answer(s) for the job`,
      );
  }
  checks.push({
    name: "remote: duplicate POSTs per idempotency key (must be 0)",
    value: `${duplicates}${allowedSeconds ? ` (+${allowedSeconds} after notSubmitted, same key)` : ""}`,
    ok: duplicates === 0,
  });
  const multiKey = [...keysByJob].filter(([, keys]) => keys.length > 1);
  for (const [id, keys] of multiKey)
    details.push(`remote: job ${id} POSTed under ${keys.length} keys: ${keys.join(", ")}`);
  checks.push({
    name: "remote: jobs POSTed under more than one key (must be 0)",
    value: String(multiKey.length),
    ok: multiKey.length === 0,
  });
  // Orphaned task ids: accepted by the provider, never recorded as the job's task id.
  const orphans = input.provider.tasks.filter((t) => {
    const job = byId.get(t.key.slice(0, t.key.lastIndexOf(":")));
    return job?.taskId !== t.id;
  });
  for (const t of orphans.slice(0, 20))
    details.push(`remote: orphaned task id ${t.id} (key ${t.key}): the job does not record it`);
  checks.push({
    name: "remote: orphaned task ids (must be 0)",
    value: String(orphans.length),
    ok: orphans.length === 0,
  });
  // Every job done, or dead-lettered for a task the plan made fail.
  const unexplained = input.jobs.filter((j) => {
    if (j.status === "done") return false;
    const planned = remoteSpec(input.seed, j.n).args.behaviour.outcome === "failed";
    return !(j.status === "dead_letter" && j.deadReason === "remote_failed" && planned);
  });
  for (const j of unexplained.slice(0, 20))
    details.push(
      `remote: job ${j.id} (n=${j.n}, ${j.name}) ended ${j.status}${j.deadReason ? ` (${j.deadReason})` : ""}, phase ${j.phase ?? "none"}${j.owner ? `, owner ${j.owner}` : ""}`,
    );
  checks.push({
    name: "remote: jobs neither done nor explainable (must be 0)",
    value: String(unexplained.length),
    ok: unexplained.length === 0,
  });
  checks.push({
    name: "time: remote settle + operator step",
    value: `${(op.settleMs / 1000).toFixed(2)} s`,
  });
  return {
    checks,
    details,
    failed: checks.filter((c) => c.ok === false).map((c) => c.name),
  };
}
