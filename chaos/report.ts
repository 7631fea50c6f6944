/**
 * The checks of a chaos run, from what is left at the end (job rows, dead-letter rows, worker
 * rows), the run log the handlers wrote, the workers' log lines and the record of every fault.
 *
 * Must be zero: lost jobs, stranded `processing` rows, phantom rows, unexpected dead letters,
 * unexplained duplicate runs, rows whose attempts do not match their runs, unexplained
 * recoveries, interruption counts that do not match the recoveries, unexpected worker exits.
 */
import type { RunRow } from "./runlog.js";

export interface JobState {
  id: string;
  status: string;
  attempts: number;
  interruptions: number;
}

export interface DeadState {
  id: string;
  reason: string;
  attempts: number;
  interruptions: number;
}

/** One injected fault. Times are epoch milliseconds. */
export interface FaultRecord {
  kind: "sigkill" | "sigterm" | "sigstop_long" | "sigstop_short" | "pg_restart";
  /** Seconds into the chaos phase it was planned for. */
  planned: number;
  at: number;
  pid?: number;
  label?: string;
  /** SIGSTOP: when SIGCONT was sent; the pause actually lasted `contAt - at`. */
  contAt?: number;
  /** SIGSTOP on SQLite: the stopped process held the database's write lock (probed). */
  heldLock?: boolean;
  /**
   * PostgreSQL restart (`at` = the command started): when a probe first failed to connect, when
   * it first connected again, and when the command returned.
   */
  downAt?: number;
  readyAt?: number;
  endAt?: number;
  skipped?: string;
}

/** A recovery as a worker (or `soniq recover`) logged it. */
export interface RecoveryEvent {
  at: number;
  jobId: string;
  previousOwner: string | null;
  kind: "requeued" | "crash_loop";
  /** Whether it charged an interruption (false: the job was not known to have started). */
  charged: boolean;
  source: string;
}

/** A NACK at a shutdown deadline, as the worker logged it. */
export interface NackEvent {
  at: number;
  jobId: string;
  workerId: string;
}

export interface WorkerExitRecord {
  label: string;
  pid: number;
  code: number | null;
  signal: string | null;
  at: number;
  /** What the harness did to it last: "sigkill", "sigterm", "final_sigterm", "final_sigkill". */
  cause: string | null;
  /** Whether it had logged "worker started". */
  started?: boolean;
}

export interface RunSettings {
  heartbeatInterval: number;
  heartbeatTimeout: number;
  pollInterval: number;
  shutdownTimeout: number;
  maxInterruptions: number;
}

export interface AnalysisInput {
  backend: "postgres" | "sqlite";
  settings: RunSettings;
  /** Acknowledged enqueues: id → logical number. */
  enqueued: Map<string, number>;
  flaky: Set<number>;
  /** Logical numbers of the poison jobs (they SIGKILL their own worker). */
  poison: Set<number>;
  jobs: JobState[];
  dead: DeadState[];
  /** soniq_workers: worker id → pid. */
  workerPids: Map<string, number>;
  runs: RunRow[];
  faults: FaultRecord[];
  recoveries: RecoveryEvent[];
  nacks: NackEvent[];
  exits: WorkerExitRecord[];
  /** What the final `soniq recover` did. */
  finalRecover: { requeued: number; deadLettered: number } | null;
  /** Log lines of note: fenced-out writes, outcome writes retried, claim failures. */
  logCounts: Record<string, number>;
  /** Lines on worker stderr that are not JSON log lines (crash traces). */
  strayLines: string[];
  /**
   * The NACK counter scraped from each worker's `/metrics` once it stopped (its health endpoints
   * linger until the harness has read them), against the NACKs its log shows.
   */
  scrapedNacks?: {
    /** Sum of `soniq_shutdown_nacks_total` over the workers scraped after they stopped. */
    scraped: number;
    /** "job NACK'd" log lines of those same workers. */
    logged: number;
    /** Workers scraped after they stopped. */
    workers: number;
    /** Workers killed (SIGKILL) before a last scrape, and the NACKs their logs show. */
    unscraped: { workers: number; loggedNacks: number };
  };
  timings: Record<string, number>;
}

export interface Check {
  name: string;
  value: string;
  /** undefined: informational; true/false: a must-hold check. */
  ok?: boolean;
}

export interface Analysis {
  backend: string;
  checks: Check[];
  details: string[];
  failed: string[];
}

const median = (xs: number[]) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const sec = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : "n/a");

export function analyze(input: AnalysisInput): Analysis {
  const { settings } = input;
  const checks: Check[] = [];
  const details: string[] = [];
  const hbT = settings.heartbeatTimeout * 1000;
  const hbI = settings.heartbeatInterval * 1000;
  const poll = settings.pollInterval * 1000;
  /** A pause this long may make a worker stale: its last heartbeat was up to hbI before the stop. */
  const staleAfter = hbT - hbI;

  const jobsById = new Map(input.jobs.map((j) => [j.id, j]));
  const deadById = new Map(input.dead.map((d) => [d.id, d]));
  const runsByJob = new Map<string, RunRow[]>();
  for (const r of input.runs) {
    const list = runsByJob.get(r.jobId) ?? [];
    list.push(r);
    runsByJob.set(r.jobId, list);
  }
  for (const list of runsByJob.values()) list.sort((a, b) => a.startedAt - b.startedAt);

  const kills = input.faults.filter((f) => f.kind === "sigkill" && f.pid !== undefined);
  const stops = input.faults.filter((f) => f.kind.startsWith("sigstop") && f.pid !== undefined);
  const longStops = stops.filter(
    (f) => (f.contAt ?? Number.POSITIVE_INFINITY) - f.at >= staleAfter,
  );
  const restarts = input.faults.filter((f) => f.kind === "pg_restart" && !f.skipped);
  /** From the restart until every worker has heartbeated again and recovery has run once more. */
  const restartWindows = restarts.map((f) => ({
    from: f.at,
    to: Math.max(f.readyAt ?? f.at, f.endAt ?? f.at) + hbT + hbI + poll + 2000,
  }));
  const inRestart = (t: number) => restartWindows.some((w) => t >= w.from && t <= w.to);
  const exitByPid = new Map(input.exits.map((e) => [e.pid, e]));
  /** Worker processes that ran a poison job (which SIGKILLs its own process). */
  const poisonPids = new Set(input.runs.filter((r) => input.poison.has(r.n)).map((r) => r.pid));

  type Cause = "sigkill" | "sigstop" | "pg_restart" | "sqlite_lock" | "unexplained";
  const lockStops = stops.filter((f) => f.heldLock === true);
  /** Why the claim of worker `workerId` was recovered at `at`: the fault that made it not live. */
  const recoveryCause = (workerId: string | null, at: number): { reason: Cause; why: string } => {
    const pid = workerId ? input.workerPids.get(workerId) : undefined;
    const kill = kills.find((f) => f.pid === pid && f.at <= at + 50);
    if (pid !== undefined && kill)
      return { reason: "sigkill", why: `pid ${pid} was SIGKILLed ${sec(at - kill.at)} before` };
    if (pid !== undefined && poisonPids.has(pid))
      return { reason: "sigkill", why: `pid ${pid} SIGKILLed itself running a poison job` };
    const stop = longStops.find(
      (f) => f.pid === pid && f.at <= at && (f.contAt ?? Number.POSITIVE_INFINITY) + 2000 >= at,
    );
    if (pid !== undefined && stop)
      return {
        reason: "sigstop",
        why: `pid ${pid} was SIGSTOPped for ${sec((stop.contAt ?? Number.NaN) - stop.at)}, past the stale window`,
      };
    if (inRestart(at))
      return {
        reason: "pg_restart",
        why: "heartbeats lapsed while PostgreSQL was down (recovered right after the restart)",
      };
    const stall = lockStops.find(
      (f) => f.at <= at && (f.contAt ?? Number.POSITIVE_INFINITY) + hbI + 1000 >= at,
    );
    if (stall && (stall.contAt ?? Number.POSITIVE_INFINITY) - stall.at >= staleAfter)
      return {
        reason: "sqlite_lock",
        why: `pid ${pid ?? "?"} was live, but pid ${stall.pid} was SIGSTOPped for ${sec((stall.contAt ?? Number.NaN) - stall.at)} holding the SQLite write lock: no worker could heartbeat meanwhile, so every claim looked stale once the lock was released`,
      };
    const exit = pid !== undefined ? exitByPid.get(pid) : undefined;
    if (exit && exit.at <= at + 50) {
      if (exit.cause === "final_sigkill")
        return { reason: "sigkill", why: `pid ${pid} ignored the final SIGTERM and was SIGKILLed` };
      if (exit.code === 3)
        return {
          reason: "pg_restart",
          why: `pid ${pid} exited 3: it could not record an outcome while the database was away`,
        };
      return {
        reason: "unexplained",
        why: `pid ${pid} exited (code=${exit.code} signal=${exit.signal}) leaving the row processing`,
      };
    }
    return { reason: "unexplained", why: `pid ${pid ?? "?"} was live` };
  };
  /** Why a job whose handler completed in `prev` ran again in `next`. */
  const explainDuplicate = (
    jobId: string,
    prev: RunRow,
    next: RunRow,
  ): { reason: Cause; note: string } => {
    // The claim that was taken away: usually the earlier run's; but a worker stopped between its
    // claim and the start of its handler starts the handler only after SIGCONT, so its run can
    // come second although its claim was the one recovered.
    const requeues = input.recoveries.filter(
      (e) =>
        e.jobId === jobId &&
        (e.previousOwner === prev.workerId || e.previousOwner === next.workerId) &&
        e.at <= next.startedAt + 50,
    );
    const requeue =
      requeues.find((e) => e.previousOwner === prev.workerId && e.at >= prev.startedAt - 50) ??
      requeues.find((e) => e.previousOwner === next.workerId);
    if (requeue) {
      const cause = recoveryCause(requeue.previousOwner, requeue.at);
      if (requeue.previousOwner !== prev.workerId || requeue.at < prev.startedAt - 50) {
        return {
          reason: cause.reason,
          note: `pid ${next.pid} claimed it first, but its claim was recovered by ${requeue.source} before its handler started (${cause.why}); pid ${prev.pid} ran it, and pid ${next.pid}'s handler ran after SIGCONT, its completion fenced out`,
        };
      }
      const ended = prev.endedAt ?? prev.startedAt;
      const when =
        requeue.at >= ended
          ? `${sec(requeue.at - ended)} after its handler ended, before the completion was written`
          : `while its handler was still running (it ended ${sec(ended - requeue.at)} later and its completion was fenced out)`;
      return {
        reason: cause.reason,
        note: `pid ${prev.pid}'s claim was recovered by ${requeue.source} ${when}: ${cause.why}; run again ${sec(next.startedAt - requeue.at)} after the recovery`,
      };
    }
    const nack = input.nacks.find(
      (e) =>
        e.jobId === jobId &&
        e.workerId === prev.workerId &&
        e.at >= prev.startedAt - 50 &&
        e.at <= next.startedAt + 50,
    );
    if (nack) {
      return inRestart(nack.at)
        ? {
            reason: "pg_restart",
            note: `pid ${prev.pid} finished the handler but could not record the outcome while PostgreSQL was down; at the shutdown deadline the row was NACK'd`,
          }
        : {
            reason: "unexplained",
            note: `pid ${prev.pid} NACK'd a job whose handler had completed (not during a database outage)`,
          };
    }
    // No requeue logged (the log line can be lost when the leader is SIGKILLed right after the
    // recovery commits): fall back to the faults of the worker that ran the earlier copy.
    const kill = kills.find(
      (f) => f.pid === prev.pid && f.at >= prev.startedAt - 50 && f.at <= next.startedAt + 50,
    );
    if (kill)
      return {
        reason: "sigkill",
        note: `no requeue logged; pid ${prev.pid} was SIGKILLed ${sec(kill.at - (prev.endedAt ?? prev.startedAt))} after its handler ended`,
      };
    const stop = longStops.find(
      (f) =>
        f.pid === prev.pid &&
        f.at <= next.startedAt + 50 &&
        (f.contAt ?? Number.POSITIVE_INFINITY) >= prev.startedAt - 50,
    );
    if (stop)
      return {
        reason: "sigstop",
        note: `no requeue logged; pid ${prev.pid} was SIGSTOPped for ${sec((stop.contAt ?? Number.NaN) - stop.at)}`,
      };
    if (inRestart(next.startedAt))
      return {
        reason: "pg_restart",
        note: "no requeue logged; run again during the PostgreSQL restart",
      };
    return {
      reason: "unexplained",
      note: `no fault explains it (runs ${prev.runId} by ${prev.workerId} and ${next.runId} by ${next.workerId})`,
    };
  };

  // ---- counts ------------------------------------------------------------------------------
  const byStatus: Record<string, number> = {};
  for (const j of input.jobs) byStatus[j.status] = (byStatus[j.status] ?? 0) + 1;
  const byReason: Record<string, number> = {};
  for (const d of input.dead) byReason[d.reason] = (byReason[d.reason] ?? 0) + 1;
  checks.push({ name: "jobs enqueued (acknowledged)", value: String(input.enqueued.size) });
  checks.push({ name: "rows done", value: String(byStatus.done ?? 0) });
  checks.push({
    name: "dead-letter rows",
    value:
      input.dead.length === 0
        ? "0"
        : Object.entries(byReason)
            .map(([k, v]) => `${v} ${k}`)
            .join(", "),
  });

  // ---- lost, stranded, phantom --------------------------------------------------------------
  const lost: string[] = [];
  for (const id of input.enqueued.keys()) {
    if (jobsById.get(id)?.status === "done" || deadById.has(id)) continue;
    lost.push(id);
  }
  checks.push({ name: "lost jobs (must be 0)", value: String(lost.length), ok: lost.length === 0 });
  for (const id of lost.slice(0, 10)) {
    const row = jobsById.get(id);
    details.push(
      `lost: job ${id} (n=${input.enqueued.get(id)}) is ${row ? row.status : "missing"}`,
    );
  }
  const stranded = input.jobs.filter((j) => j.status === "processing");
  checks.push({
    name: "rows left processing (must be 0)",
    value: String(stranded.length),
    ok: stranded.length === 0,
  });
  const phantom = [...input.jobs, ...input.dead].filter((r) => !input.enqueued.has(r.id));
  checks.push({
    name: "rows never enqueued (must be 0)",
    value: String(phantom.length),
    ok: phantom.length === 0,
  });
  const badDead = input.dead.filter((d) => d.reason !== "crash_loop");
  checks.push({
    name: "dead letters other than crash_loop (must be 0)",
    value: String(badDead.length),
    ok: badDead.length === 0,
  });
  const isPoisonId = (id: string) => input.poison.has(input.enqueued.get(id) ?? -1);
  const innocentDead = input.dead.filter((d) => !isPoisonId(d.id));
  checks.push({
    name: "innocent jobs dead-lettered (must be 0)",
    value: String(innocentDead.length),
    ok: innocentDead.length === 0,
  });
  for (const d of innocentDead)
    details.push(`innocent dead letter: job ${d.id} (n=${input.enqueued.get(d.id)}) ${d.reason}`);
  // With the prefetch window on (the default), a worker holds buffered rows beside its running
  // ones: none of them may be charged into crash_loop by a crash it did not cause.
  const innocentCrashLoop = innocentDead.filter((d) => d.reason === "crash_loop");
  checks.push({
    name: "crash_loop dead letters of jobs that never crashed their worker (must be 0)",
    value: String(innocentCrashLoop.length),
    ok: innocentCrashLoop.length === 0,
  });
  const poisonIds = [...input.enqueued].filter(([, n]) => input.poison.has(n)).map(([id]) => id);
  const poisonEnded = poisonIds.filter((id) =>
    input.dead.some((d) => d.id === id && d.reason === "crash_loop"),
  );
  const poisonRuns = (id: string) => input.runs.filter((r) => r.jobId === id).length;
  const crashBound = settings.maxInterruptions + 2;
  const poisonOverBound = poisonIds.filter((id) => poisonRuns(id) > crashBound);
  checks.push({
    name: `poison jobs in the DLQ as crash_loop within maxInterruptions + 2 = ${crashBound} crashes (must hold)`,
    value: `${poisonEnded.length} of ${poisonIds.length} (crashes: ${poisonIds.map(poisonRuns).join(", ") || "—"})`,
    ok: poisonEnded.length === poisonIds.length && poisonOverBound.length === 0,
  });
  const deadLetterDetails = () => {
    for (const d of input.dead) {
      const causes = input.recoveries
        .filter((e) => e.jobId === d.id)
        .sort((a, b) => a.at - b.at)
        .map((e) => recoveryCause(e.previousOwner, e.at).reason);
      details.push(
        `dead letter: job ${d.id} (n=${input.enqueued.get(d.id)}) reason ${d.reason}, interruptions ${d.interruptions}, attempts ${d.attempts}` +
          (d.reason === "crash_loop"
            ? ` — the workers running it were lost ${d.interruptions} times (${causes.join(", ")}); maxInterruptions ${settings.maxInterruptions} moves it to the dead-letter queue instead of a ${settings.maxInterruptions + 1}th requeue`
            : ""),
      );
    }
  };

  deadLetterDetails();

  // ---- runs and duplicates -------------------------------------------------------------------
  const outcomes: Record<string, number> = { completed: 0, failed: 0, aborted: 0, open: 0 };
  for (const r of input.runs) {
    const key = r.outcome ?? "open";
    outcomes[key] = (outcomes[key] ?? 0) + 1;
  }
  checks.push({
    name: "handler runs: completed / failed / aborted / cut off",
    value: `${outcomes.completed} / ${outcomes.failed} / ${outcomes.aborted} / ${outcomes.open}`,
  });

  const why = { sigkill: 0, sigstop: 0, pg_restart: 0, sqlite_lock: 0, unexplained: 0 };
  let duplicateJobs = 0;
  for (const [jobId, list] of runsByJob) {
    const completed = list.filter((r) => r.outcome === "completed");
    if (completed.length < 2) continue;
    duplicateJobs += 1;
    for (let i = 1; i < completed.length; i++) {
      const prev = completed[i - 1] as RunRow;
      const next = completed[i] as RunRow;
      const { reason, note } = explainDuplicate(jobId, prev, next);
      why[reason] += 1;
      details.push(`duplicate [${reason}]: job ${jobId} (n=${prev.n}): ${note}`);
    }
  }
  const dupRuns = Object.values(why).reduce((a, b) => a + b, 0);
  checks.push({
    name: "duplicate completed runs (jobs)",
    value: `${dupRuns} (${duplicateJobs})`,
  });
  checks.push({ name: "↳ explained by SIGKILL", value: String(why.sigkill) });
  checks.push({ name: "↳ explained by SIGSTOP beyond stale window", value: String(why.sigstop) });
  checks.push({ name: "↳ explained by PostgreSQL restart", value: String(why.pg_restart) });
  checks.push({
    name: "↳ explained by a SIGSTOP holding the SQLite write lock",
    value: input.backend === "sqlite" ? String(why.sqlite_lock) : "n/a",
  });
  checks.push({
    name: "↳ unexplained (must be 0)",
    value: String(why.unexplained),
    ok: why.unexplained === 0,
  });

  // ---- attempts ------------------------------------------------------------------------------
  let badAttempts = 0;
  let flakyDone = 0;
  for (const j of input.jobs) {
    if (j.status !== "done") continue;
    const n = input.enqueued.get(j.id);
    const list = runsByJob.get(j.id) ?? [];
    const failedAttempts = new Set(
      list.filter((r) => r.outcome === "failed").map((r) => r.attempt),
    );
    const completed = list.filter((r) => r.outcome === "completed");
    const isFlaky = n !== undefined && input.flaky.has(n);
    if (isFlaky) flakyDone += 1;
    const expected = 1 + failedAttempts.size;
    const problems: string[] = [];
    if (j.attempts !== expected)
      problems.push(`attempts ${j.attempts} but ${failedAttempts.size} failed attempt(s) ran`);
    if (completed.length === 0) problems.push("done without a completed run");
    if (completed.some((r) => r.attempt !== j.attempts))
      problems.push(
        `completed run(s) at attempt ${completed.map((r) => r.attempt).join(",")} vs attempts ${j.attempts}`,
      );
    for (let a = 1; a < j.attempts; a++)
      if (!failedAttempts.has(a)) problems.push(`no failed run for attempt ${a}`);
    if (!isFlaky && j.attempts !== 1) problems.push("a handler that never throws needs attempts 1");
    if (isFlaky && j.attempts !== 2) problems.push("a flaky job fails once: attempts should be 2");
    if (problems.length > 0) {
      badAttempts += 1;
      if (badAttempts <= 10) details.push(`attempts: job ${j.id} (n=${n}): ${problems.join("; ")}`);
    }
  }
  checks.push({
    name: "done rows with attempts ≠ 1 + failed runs (must be 0)",
    value: `${badAttempts} (flaky jobs done: ${flakyDone}, attempts 2 each)`,
    ok: badAttempts === 0,
  });

  // ---- interruptions and recoveries -------------------------------------------------------------
  // Only charged recoveries count an interruption (a job not known to have started is not
  // charged: docs/reliability.md, "Interruptions are earned").
  const recoveredByJob = new Map<string, number>();
  for (const e of input.recoveries)
    if (e.charged) recoveredByJob.set(e.jobId, (recoveredByJob.get(e.jobId) ?? 0) + 1);
  let sumInterruptions = 0;
  let mismatch = 0;
  for (const r of [...input.jobs, ...input.dead]) {
    sumInterruptions += r.interruptions;
    const logged = recoveredByJob.get(r.id) ?? 0;
    if (logged !== r.interruptions) {
      mismatch += 1;
      if (mismatch <= 10)
        details.push(
          `interruptions: job ${r.id}: row says ${r.interruptions}, recoveries logged ${logged}`,
        );
    }
  }
  const chargedCount = input.recoveries.filter((e) => e.charged).length;
  checks.push({
    name: "interruptions in rows / charged recoveries logged (of all recoveries)",
    value: `${sumInterruptions} / ${chargedCount} (of ${input.recoveries.length})`,
  });
  const uncharged = input.recoveries.filter((e) => !e.charged);
  checks.push({
    name: "uncharged recoveries (requeued with no interruption: claimed or prefetched, start not known)",
    value: `${uncharged.length} of ${input.recoveries.length} recoveries, ${new Set(uncharged.map((e) => e.jobId)).size} jobs`,
  });
  checks.push({
    name: "rows whose interruptions ≠ their charged recoveries (must be 0)",
    value: String(mismatch),
    ok: mismatch === 0,
  });
  const recWhy = { sigkill: 0, sigstop: 0, pg_restart: 0, sqlite_lock: 0, unexplained: 0 };
  for (const e of input.recoveries) {
    const cause = recoveryCause(e.previousOwner, e.at);
    recWhy[cause.reason] += 1;
    if (cause.reason === "unexplained" || cause.reason === "sqlite_lock")
      details.push(
        `recovery [${cause.reason}]: job ${e.jobId} from ${e.previousOwner} at ${new Date(e.at).toISOString()} by ${e.source}: ${cause.why}`,
      );
  }
  checks.push({
    name: "recoveries caused by SIGKILL / SIGSTOP>stale / PG restart / SQLite lock",
    value: `${recWhy.sigkill} / ${recWhy.sigstop} / ${input.backend === "postgres" ? recWhy.pg_restart : "n/a"} / ${input.backend === "sqlite" ? recWhy.sqlite_lock : "n/a"}`,
  });
  checks.push({
    name: "recoveries of a live worker's job (must be 0)",
    value: String(recWhy.unexplained),
    ok: recWhy.unexplained === 0,
  });

  // ---- faults and worker exits ------------------------------------------------------------------
  const count = (k: FaultRecord["kind"]) =>
    input.faults.filter((f) => f.kind === k && !f.skipped).length;
  const restartNote = input.faults.find((f) => f.kind === "pg_restart");
  checks.push({
    name: "faults: SIGKILL / SIGTERM / SIGSTOP>stale / SIGSTOP short",
    value: `${count("sigkill")} / ${count("sigterm")} / ${longStops.length} / ${stops.length - longStops.length}`,
  });
  checks.push({
    name: "SIGSTOPs that caught a worker holding the SQLite lock",
    value: input.backend === "sqlite" ? String(lockStops.length) : "n/a",
  });
  checks.push({
    name: "PostgreSQL restarts",
    value:
      input.backend !== "postgres"
        ? "n/a"
        : restartNote?.skipped
          ? `SKIPPED: ${restartNote.skipped}`
          : restartNote
            ? `1 (refused connections for ${sec((restartNote.readyAt ?? Number.NaN) - (restartNote.downAt ?? restartNote.at))})`
            : "not planned",
  });
  const missing: string[] = [];
  if (count("sigkill") === 0) missing.push("SIGKILL");
  if (count("sigterm") === 0) missing.push("SIGTERM");
  if (longStops.length === 0) missing.push("SIGSTOP beyond the stale window");
  if (input.backend === "postgres" && restarts.length === 0 && !restartNote?.skipped)
    missing.push("PostgreSQL restart");
  checks.push({
    name: "every fault kind injected (must hold)",
    value: missing.length === 0 ? "yes" : `missing: ${missing.join(", ")}`,
    ok: missing.length === 0,
  });
  const exitKinds: Record<string, number> = {};
  const unexpected: WorkerExitRecord[] = [];
  const earlyTerm: WorkerExitRecord[] = [];
  for (const e of input.exits) {
    const key = e.signal ? e.signal : `exit ${e.code}`;
    exitKinds[key] = (exitKinds[key] ?? 0) + 1;
    const ours =
      e.signal === "SIGKILL" &&
      (e.cause === "sigkill" || e.cause === "final_sigkill" || poisonPids.has(e.pid));
    const graceful =
      (e.code === 0 || e.code === 1) && (e.cause === "sigterm" || e.cause === "final_sigterm");
    // 3: an outcome could not be recorded; 2: start-up failed (the database refused).
    const dbDown = (e.code === 3 || e.code === 2) && inRestart(e.at);
    // Known issue: the CLI installs its SIGTERM handler only after its own imports have loaded,
    // so a SIGTERM in the first few hundred ms of a worker process kills it (nothing claimed yet).
    const early = e.signal === "SIGTERM" && e.cause === "sigterm" && e.started === false;
    if (early) earlyTerm.push(e);
    else if (!ours && !graceful && !dbDown) unexpected.push(e);
  }
  checks.push({
    name: "worker exits",
    value: Object.entries(exitKinds)
      .sort()
      .map(([k, v]) => `${v}× ${k}`)
      .join(", "),
  });
  checks.push({
    name: "killed by a SIGTERM during start-up (known issue)",
    value: String(earlyTerm.length),
  });
  for (const e of earlyTerm)
    details.push(
      `start-up SIGTERM: ${e.label} pid ${e.pid} died of the SIGTERM (default action) before logging "worker started": the CLI had not installed its signal handlers yet (nothing was claimed)`,
    );
  checks.push({
    name: "unexpected worker exits (must be 0)",
    value: String(unexpected.length),
    ok: unexpected.length === 0,
  });
  for (const e of unexpected)
    details.push(
      `unexpected exit: ${e.label} pid ${e.pid} code=${e.code} signal=${e.signal} (last fault: ${e.cause ?? "none"})`,
    );
  const finalSigkills = input.exits.filter((e) => e.cause === "final_sigkill").length;
  if (finalSigkills > 0)
    details.push(`${finalSigkills} worker(s) did not exit after the final SIGTERM and were killed`);
  for (const line of input.strayLines.slice(0, 10)) details.push(`stray output: ${line}`);

  // ---- time to recover ------------------------------------------------------------------------------
  const bound = hbT + hbI + poll;
  const overlapsRestart = (a: number, b: number) =>
    restartWindows.some((w) => a <= w.to && b >= w.from);
  /** Delays from a fault at `t` on `pid` to the next run (same attempt: not a retry) of each job it held. */
  const sampleFor = (pid: number, t: number, until: number) => {
    const out: Array<{ jobId: string; n: number; delay: number }> = [];
    for (const [jobId, list] of runsByJob) {
      for (let i = 0; i < list.length - 1; i++) {
        const r = list[i] as RunRow;
        if (r.pid !== pid || r.startedAt > t) continue;
        const next = list[i + 1] as RunRow;
        if (next.startedAt > t && next.startedAt <= until && next.attempt === r.attempt)
          out.push({ jobId, n: r.n, delay: next.startedAt - t });
      }
    }
    return out;
  };
  const killSamples: number[] = [];
  let killSamplesInRestart = 0;
  for (const f of kills) {
    for (const sample of sampleFor(f.pid as number, f.at, Number.POSITIVE_INFINITY)) {
      if (overlapsRestart(f.at, f.at + sample.delay)) {
        killSamplesInRestart += 1;
        continue;
      }
      killSamples.push(sample.delay);
      if (sample.delay > bound + 500) {
        const requeue = input.recoveries.find((e) => e.jobId === sample.jobId && e.at >= f.at);
        details.push(
          `slow recovery: job ${sample.jobId} (n=${sample.n}) ran again ${sec(sample.delay)} after the SIGKILL of pid ${f.pid}` +
            (requeue
              ? `: requeued after ${sec(requeue.at - f.at)}, then waited ${sec(sample.delay - (requeue.at - f.at))} in the queue (a recovered row is due "now", behind rows already due)`
              : ""),
        );
      }
    }
  }
  const stopSamples: number[] = [];
  for (const f of longStops)
    for (const sample of sampleFor(f.pid as number, f.at, f.contAt ?? Number.POSITIVE_INFINITY))
      stopSamples.push(sample.delay);
  const requeueSamples: number[] = [];
  for (const e of input.recoveries) {
    const pid = e.previousOwner ? input.workerPids.get(e.previousOwner) : undefined;
    const kill = kills.find((f) => f.pid === pid && f.at <= e.at);
    if (kill && !overlapsRestart(kill.at, e.at)) requeueSamples.push(e.at - kill.at);
  }
  const maxKill = killSamples.length ? Math.max(...killSamples) : Number.NaN;
  const maxRequeue = requeueSamples.length ? Math.max(...requeueSamples) : Number.NaN;
  const detect = hbT + hbI;
  checks.push({
    name: "SIGKILL → job requeued: median / max",
    value: `${sec(median(requeueSamples))} / ${sec(maxRequeue)} (n=${requeueSamples.length})`,
  });
  // An expectation, not a bound: recovery runs on the maintenance leader's heartbeat tick, and when
  // the SIGKILLed worker held the maintenance lease, nobody recovers until that lease expires and
  // another worker takes it; a loaded machine delays ticks too. So it is informational (no `ok`).
  checks.push({
    name: "↳ expected (not a bound): heartbeatTimeout + heartbeatInterval",
    value: `${sec(detect)}${
      Number.isFinite(maxRequeue)
        ? maxRequeue <= detect + 300
          ? " — within"
          : " — exceeded (a killed maintenance leader's lease must expire first, or a tick was late)"
        : ""
    }`,
  });
  checks.push({
    name: "SIGKILL → job running again: median / max",
    value: `${sec(median(killSamples))} / ${sec(maxKill)} (n=${killSamples.length}${killSamplesInRestart ? `, +${killSamplesInRestart} overlapping the restart not counted` : ""})`,
  });
  const waited = killSamples.filter((d) => d > bound + 300).length;
  checks.push({
    name: "↳ bound with a free slot: + pollInterval",
    value: `${sec(bound)}${
      Number.isFinite(maxKill)
        ? waited === 0
          ? " — within"
          : ` — ${waited} waited behind due jobs (see details)`
        : ""
    }`,
  });
  checks.push({
    name: "SIGSTOP>stale → job running again: median / max",
    value: `${sec(median(stopSamples))} / ${sec(stopSamples.length ? Math.max(...stopSamples) : Number.NaN)} (n=${stopSamples.length})`,
  });

  // ---- the rest -------------------------------------------------------------------------------
  if (input.finalRecover) {
    checks.push({
      name: "final `soniq recover`: requeued / crash_loop",
      value: `${input.finalRecover.requeued} / ${input.finalRecover.deadLettered}`,
    });
  }
  const logNotes = Object.entries(input.logCounts)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${v} ${k}`)
    .join(", ");
  checks.push({ name: "worker log events", value: logNotes || "none" });
  if (input.scrapedNacks) {
    const s = input.scrapedNacks;
    checks.push({
      name: "shutdown NACKs: scraped soniq_shutdown_nacks_total = logged (must be equal)",
      value: `${s.scraped} / ${s.logged} over ${s.workers} stopped workers${s.unscraped.workers > 0 ? `; ${s.unscraped.workers} killed before a last scrape (${s.unscraped.loggedNacks} NACKs in their logs)` : ""}`,
      ok: s.scraped === s.logged,
    });
  }
  for (const [k, v] of Object.entries(input.timings)) checks.push({ name: k, value: sec(v) });

  const failed = checks.filter((c) => c.ok === false).map((c) => c.name);
  return { backend: input.backend, checks, details, failed };
}

/** The report table: one column per backend. */
export function renderTable(analyses: Analysis[]): string {
  const names: string[] = [];
  for (const a of analyses)
    for (const c of a.checks) if (!names.includes(c.name)) names.push(c.name);
  const label = (b: string) => (b === "postgres" ? "PostgreSQL" : "SQLite");
  const cell = (a: Analysis, name: string) => {
    const c = a.checks.find((x) => x.name === name);
    if (!c) return "";
    return c.ok === undefined ? c.value : `${c.value} ${c.ok ? "✓" : "✗ FAIL"}`;
  };
  const header = ["check", ...analyses.map((a) => label(a.backend))];
  const rows = names.map((n) => [n, ...analyses.map((a) => cell(a, n))]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
