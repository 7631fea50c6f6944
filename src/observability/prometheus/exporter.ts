/**
 * The Prometheus exporter: turns a Soniq instance's events (the typed bus, docs/events.md) into
 * `prom-client` metrics. It never queries the database itself: per-queue gauges come from the
 * `queue_metrics` events the maintenance leader samples. Names, types, labels and units are an
 * API, listed in docs/metrics.md and fixed by test/e2e/metrics-scrape.test.ts. Label values are
 * bounded: `job` is a registered job name (anything else reads `_unknown`), never a job id or
 * arguments.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { EventSubscriber, Unsubscribe } from "../event-bus.js";
import type { SoniqEventMap } from "../events.js";

/** What the exporter needs of a Soniq instance (a `Soniq` is one). */
export interface PrometheusSource {
  /** The instance's events. */
  readonly events: EventSubscriber<SoniqEventMap>;
  /** Registered job names: the only values the `job` label takes (others read `_unknown`). */
  readonly definitions: ReadonlyMap<string, unknown>;
  /**
   * `metricsInterval` in seconds: queue gauges older than three intervals are dropped;
   * `heartbeatInterval` in seconds (the waiting watch's interval): waiting-for-worker gauges
   * older than three of the longer of the two are dropped.
   */
  readonly settings: { readonly metricsInterval: number; readonly heartbeatInterval?: number };
}

/** Options of {@link prometheusMetrics}. */
export interface PrometheusOptions {
  /** Where the metrics are registered. Default: a new `Registry` of their own. */
  registry?: Registry;
  /** Milliseconds since the epoch, for drain durations and staleness. Default `Date.now`. */
  clock?: () => number;
}

/** A running exporter. */
export interface PrometheusMetrics {
  /** The registry holding Soniq's metrics. */
  readonly registry: Registry;
  /** The exposition's `Content-Type` header value. */
  readonly contentType: string;
  /** The exposition text of {@link PrometheusMetrics.registry} (all its metrics). */
  scrape(): Promise<string>;
  /** Unsubscribes from the events (the metrics stay registered). Idempotent. */
  close(): void;
}

/** Histogram buckets of handler durations, in seconds. */
export const DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
];
/** Histogram buckets of queue waits (due → start), in seconds. */
export const WAIT_BUCKETS = [
  0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800, 3600,
];
/** Histogram buckets of remote calls (submit, poll, reconcile), in seconds. */
const REMOTE_CALL_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Histogram buckets of drain durations (first signal → stopped), in seconds. */
export const DRAIN_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 20, 30, 45, 60, 90, 120, 300, 600];

/** The worker states of the `soniq_worker_state` gauge. */
const STATES = ["running", "draining", "force_timeout_path", "wait_for_thread", "stopped"] as const;
type State = (typeof STATES)[number];
/** How `soniq_drains_total` can end (pre-set to 0 so a rise is measurable from the first scrape). */
const EXIT_REASONS = ["drained", "shutdown_timeout", "record_failed"] as const;
const STATUSES = [
  "queued",
  "processing",
  "done",
  "cancelled",
  "dead_letter",
  "remote_submitting",
  "remote_accepted",
  "remote_frozen",
] as const;
/** Label value of a job name that is not registered in the instance. */
export const UNKNOWN_JOB = "_unknown";

/**
 * Registers Soniq's metrics in a registry and feeds them from `soniq.events`. Subscribe it before
 * the worker starts, so no event is missed.
 *
 * ```ts
 * import { prometheusMetrics } from "soniq/prometheus";
 * const metrics = prometheusMetrics(soniq);
 * app.get("/metrics", async (_req, res) => res.type(metrics.contentType).send(await metrics.scrape()));
 * ```
 * @throws Error from prom-client when `registry` already holds a metric of the same name.
 */
export function prometheusMetrics(
  source: PrometheusSource,
  options: PrometheusOptions = {},
): PrometheusMetrics {
  const registry = options.registry ?? new Registry();
  const clock = options.clock ?? Date.now;
  const registers = [registry];
  const job = (name: string) => (source.definitions.has(name) ? name : UNKNOWN_JOB);

  const enqueued = new Counter({
    name: "soniq_jobs_enqueued_total",
    help: "Jobs inserted by this process (duplicates of a dedup key not counted).",
    labelNames: ["queue", "job"],
    registers,
  });
  const started = new Counter({
    name: "soniq_jobs_started_total",
    help: "Handler runs started by this process's workers.",
    labelNames: ["queue", "job"],
    registers,
  });
  const finished = new Counter({
    name: "soniq_jobs_finished_total",
    help: "Job outcomes written: done, retried (attempt failed, retry scheduled), dead_lettered, snoozed, cancelled.",
    labelNames: ["queue", "job", "outcome"],
    registers,
  });
  const failed = new Counter({
    name: "soniq_jobs_failed_total",
    help: "Attempts that failed (error or job_timeout), whether retried or dead-lettered.",
    labelNames: ["queue", "job"],
    registers,
  });
  const deadLettered = new Counter({
    name: "soniq_jobs_dead_lettered_total",
    help: "Jobs moved to the dead-letter queue, by reason (max_attempts_exceeded, invalid_result, unknown_job, invalid_args, crash_loop).",
    labelNames: ["queue", "job", "reason"],
    registers,
  });
  const duration = new Histogram({
    name: "soniq_job_duration_seconds",
    help: "Handler run time, start to outcome, in seconds (the outcome write not included).",
    labelNames: ["queue", "job", "outcome"],
    buckets: DURATION_BUCKETS,
    registers,
  });
  const wait = new Histogram({
    name: "soniq_job_wait_seconds",
    help: "Queue wait: from the job's due time (enqueue, delay, retry back-off or snooze end) to its handler's start, in seconds.",
    labelNames: ["queue", "job"],
    buckets: WAIT_BUCKETS,
    registers,
  });
  const inFlightByWorker = new Map<string, Set<string>>();
  new Gauge({
    name: "soniq_jobs_in_flight",
    help: "Jobs whose handler runs now, per worker of this process (the series goes when the worker stops).",
    labelNames: ["worker"],
    registers,
    collect() {
      this.reset();
      for (const [worker, ids] of inFlightByWorker) this.set({ worker }, ids.size);
    },
  });
  const states = new Map<string, State>();
  let stoppedWorkers = 0;
  new Gauge({
    name: "soniq_worker_state",
    help: "This process's workers by shutdown state (running, draining, force_timeout_path, wait_for_thread, stopped).",
    labelNames: ["state"],
    registers,
    collect() {
      const counts = new Map<State, number>(STATES.map((s) => [s, 0]));
      for (const state of states.values()) counts.set(state, (counts.get(state) ?? 0) + 1);
      counts.set("stopped", (counts.get("stopped") ?? 0) + stoppedWorkers);
      for (const [state, n] of counts) this.set({ state }, n);
    },
  });
  const nacks = new Counter({
    name: "soniq_shutdown_nacks_total",
    help: "Jobs NACK'd back to queued at the shutdown deadline (attempts unchanged).",
    labelNames: ["queue", "job"],
    registers,
  });
  const scopesPaused = new Counter({
    name: "soniq_scopes_paused_total",
    help: "Jobs a handler put back with ctx.rateLimited (no attempt spent), by the scope it paused: job, key or queue.",
    labelNames: ["queue", "job", "scope"],
    registers,
  });
  const drains = new Counter({
    name: "soniq_drains_total",
    help: "Drains finished, by exit reason (drained: exit 0; shutdown_timeout: the deadline path, exit 1; record_failed: exit 3).",
    labelNames: ["exit_reason"],
    registers,
  });
  for (const exit_reason of EXIT_REASONS) drains.inc({ exit_reason }, 0);
  const drainDuration = new Histogram({
    name: "soniq_drain_duration_seconds",
    help: "From the first stop signal to the worker stopped, in seconds.",
    labelNames: ["exit_reason"],
    buckets: DRAIN_BUCKETS,
    registers,
  });
  const fenced = new Counter({
    name: "soniq_fenced_writes_total",
    help: "Writes refused by the owner fence (the row was no longer this claim's; nothing written).",
    labelNames: ["op"],
    registers,
  });
  const recovered = new Counter({
    name: "soniq_jobs_recovered_total",
    help: "Jobs requeued by crash recovery run in this process (their worker was not live).",
    labelNames: ["queue", "job"],
    registers,
  });
  const crashLooped = new Counter({
    name: "soniq_jobs_crash_looped_total",
    help: "Jobs crash recovery in this process moved to the dead-letter queue (crash_loop).",
    labelNames: ["queue", "job"],
    registers,
  });
  const remoteSubmissions = new Counter({
    name: "soniq_remote_submissions_total",
    help: "Remote submissions started by this process's workers (phase submitting written before the request).",
    labelNames: ["job"],
    registers,
  });
  const remoteAccepted = new Counter({
    name: "soniq_remote_accepted_total",
    help: "Remote jobs this process's workers saw reach phase accepted (the remote side holds the task: a submit's answer, or a reconcile).",
    labelNames: ["job"],
    registers,
  });
  const remoteHandoffs = new Counter({
    name: "soniq_remote_handoffs_total",
    help: "Remote jobs that left a worker by their last durable phase: action release, freeze or handoff; reason deadline, draining or crash.",
    labelNames: ["job", "action", "reason"],
    registers,
  });
  const remoteFrozen = new Counter({
    name: "soniq_remote_frozen_total",
    help: "Remote submissions frozen (no usable answer: at the deadline, after a crash, or a submit that threw or timed out) by this process.",
    labelNames: ["job"],
    registers,
  });
  const stepsFrozen = new Counter({
    name: "soniq_steps_frozen_total",
    help: "Jobs frozen by this process because an effect step's outcome was unknown (docs/checkpoints.md).",
    labelNames: ["queue", "job"],
    registers,
  });
  const remoteReconciles = new Counter({
    name: "soniq_remote_reconciles_total",
    help: "Reconciles of frozen remote jobs run by this process, by outcome (accepted, not_submitted, undecided, deadline).",
    labelNames: ["job", "outcome"],
    registers,
  });
  const remotePolls = new Counter({
    name: "soniq_remote_polls_total",
    help: "Polls of accepted remote tasks run by this process, by outcome (pending, done, failed, error, deadline, timeout).",
    labelNames: ["job", "outcome"],
    registers,
  });
  const remoteCallDuration = new Histogram({
    name: "soniq_remote_call_duration_seconds",
    help: "Duration of the remote side's calls made by this process's workers: call submit, poll or reconcile, by outcome (submit: accepted, failed, error, timeout, deadline; poll and reconcile: as their counters).",
    labelNames: ["job", "call", "outcome"],
    buckets: REMOTE_CALL_BUCKETS,
    registers,
  });
  let sample:
    | {
        at: number;
        queues: SoniqEventMap["queue_metrics"]["queues"];
        exits: SoniqEventMap["queue_metrics"]["worker_exits"];
        flows: SoniqEventMap["queue_metrics"]["flows_finished"];
      }
    | undefined;
  const fresh = () =>
    sample !== undefined && clock() - sample.at <= 3 * source.settings.metricsInterval * 1000
      ? sample
      : undefined;
  new Gauge({
    name: "soniq_queue_jobs",
    help: "Jobs per queue and status (dead_letter: dead-letter entries), sampled by the maintenance leader only; absent elsewhere and when stale.",
    labelNames: ["queue", "status"],
    registers,
    collect() {
      this.reset();
      for (const q of fresh()?.queues ?? []) {
        for (const status of STATUSES) this.set({ queue: q.queue, status }, q[status]);
      }
    },
  });
  new Gauge({
    name: "soniq_queue_oldest_claimable_age_seconds",
    help: "Seconds the oldest due queued job of the queue has waited (0 when none is due; delayed jobs are not late), sampled by the maintenance leader only.",
    labelNames: ["queue"],
    registers,
    collect() {
      this.reset();
      for (const q of fresh()?.queues ?? []) {
        this.set({ queue: q.queue }, q.oldest_claimable_age_ms / 1000);
      }
    },
  });
  new Gauge({
    name: "soniq_queue_held_jobs",
    help: "Due queued jobs a flow-control limit holds back, per queue and limit (concurrency: their key runs its limit; rate: their key's rate limit or a handler's key pause), computed on read by the maintenance leader only.",
    labelNames: ["queue", "limit"],
    registers,
    collect() {
      this.reset();
      for (const q of fresh()?.queues ?? []) {
        this.set({ queue: q.queue, limit: "concurrency" }, q.held_concurrency);
        this.set({ queue: q.queue, limit: "rate" }, q.held_rate);
      }
    },
  });
  let waiting:
    | { at: number; entries: SoniqEventMap["jobs_waiting_for_worker"]["waiting"] }
    | undefined;
  const waitingNow = () => {
    const interval = Math.max(
      source.settings.metricsInterval,
      source.settings.heartbeatInterval ?? 0,
    );
    return waiting !== undefined && clock() - waiting.at <= 3 * interval * 1000
      ? waiting.entries
      : [];
  };
  new Gauge({
    name: "soniq_jobs_waiting_for_worker",
    help: "Due queued jobs no live worker can run (unknown name, newer version, no worker for the queue), per queue and job name, checked by the maintenance leader only.",
    labelNames: ["queue", "name"],
    registers,
    collect() {
      this.reset();
      for (const w of waitingNow()) this.set({ queue: w.queue, name: w.job_name }, w.count);
    },
  });
  new Gauge({
    name: "soniq_jobs_waiting_for_worker_oldest_age_seconds",
    help: "Seconds the oldest due queued job that no live worker can run has waited, per queue and job name, checked by the maintenance leader only.",
    labelNames: ["queue", "name"],
    registers,
    collect() {
      this.reset();
      for (const w of waitingNow()) {
        this.set({ queue: w.queue, name: w.job_name }, w.oldest_age_ms / 1000);
      }
    },
  });
  // How workers ended, from the database: a CLI worker's own soniq_drains_total ends with its
  // process, usually before any scrape; these outlive it (docs/metrics.md, "What to alert on").
  new Counter({
    name: "soniq_worker_exits_total",
    help: "Workers of the whole cluster that stopped, by exit reason (drained, shutdown_timeout, record_failed, uncaught_exception), counted in the database since setup; exported by the maintenance leader only.",
    labelNames: ["exit_reason"],
    registers,
    collect() {
      this.reset();
      for (const e of fresh()?.exits ?? []) this.inc({ exit_reason: e.exit_reason }, e.exits);
    },
  });
  new Gauge({
    name: "soniq_worker_last_exit_timestamp_seconds",
    help: "Unix time (seconds) of the latest worker stop with each exit reason, cluster-wide, from the database; exported by the maintenance leader only.",
    labelNames: ["exit_reason"],
    registers,
    collect() {
      this.reset();
      for (const e of fresh()?.exits ?? []) {
        this.set({ exit_reason: e.exit_reason }, Date.parse(e.last_at) / 1000);
      }
    },
  });
  // Flows and batches finish inside the database (docs/workflows.md): counted there as the
  // leader takes them, exported by the leader from its sample, like the worker exits.
  new Counter({
    name: "soniq_flows_finished_total",
    help: "Flows of the whole cluster whose root ended, by outcome (done, failed: dead-lettered, cancelled), counted in the database since setup; exported by the maintenance leader only.",
    labelNames: ["outcome"],
    registers,
    collect() {
      this.reset();
      for (const f of fresh()?.flows ?? []) {
        if (f.kind === "flow") this.inc({ outcome: f.outcome }, f.count);
      }
    },
  });
  new Counter({
    name: "soniq_batches_finished_total",
    help: "Batches of the whole cluster whose last member ended once sealed, by outcome (succeeded: every member done; failed), counted in the database since setup; exported by the maintenance leader only.",
    labelNames: ["outcome"],
    registers,
    collect() {
      this.reset();
      for (const f of fresh()?.flows ?? []) {
        if (f.kind === "batch") this.inc({ outcome: f.outcome }, f.count);
      }
    },
  });

  const drainStarts = new Map<string, number>();
  const settle = (workerId: string | undefined, jobId: string) => {
    if (workerId !== undefined) inFlightByWorker.get(workerId)?.delete(jobId);
  };
  const off: Unsubscribe[] = [];
  const on = <K extends keyof SoniqEventMap>(
    name: K,
    listener: (e: Readonly<SoniqEventMap[K]>) => void,
  ) => off.push(source.events.on(name, listener));

  on("worker_started", (e) => {
    states.set(e.worker_id, "running");
    inFlightByWorker.set(e.worker_id, new Set());
  });
  on("job_enqueued", (e) => enqueued.inc({ queue: e.queue, job: job(e.job_name) }));
  on("job_started", (e) => {
    const labels = { queue: e.queue, job: job(e.job_name) };
    started.inc(labels);
    wait.observe(labels, e.wait_ms / 1000);
    inFlightByWorker.get(e.worker_id)?.add(e.job_id);
  });
  on("job_done", (e) => {
    settle(e.worker_id, e.job_id);
    const labels = { queue: e.queue, job: job(e.job_name) };
    finished.inc({ ...labels, outcome: "done" });
    if (e.duration_ms !== undefined)
      duration.observe({ ...labels, outcome: "done" }, e.duration_ms / 1000);
  });
  on("job_failed", (e) => {
    settle(e.worker_id, e.job_id);
    const labels = { queue: e.queue, job: job(e.job_name) };
    finished.inc({ ...labels, outcome: "retried" });
    failed.inc(labels);
    if (e.duration_ms !== undefined)
      duration.observe({ ...labels, outcome: "failed" }, e.duration_ms / 1000);
  });
  on("job_snoozed", (e) => {
    settle(e.worker_id, e.job_id);
    const labels = { queue: e.queue, job: job(e.job_name) };
    finished.inc({ ...labels, outcome: "snoozed" });
    if (e.duration_ms !== undefined)
      duration.observe({ ...labels, outcome: "snoozed" }, e.duration_ms / 1000);
  });
  on("scope_paused", (e) => {
    scopesPaused.inc({ queue: e.queue, job: job(e.job_name), scope: e.scope });
  });
  on("job_dead_lettered", (e) => {
    settle(e.worker_id, e.job_id);
    const labels = { queue: e.queue, job: job(e.job_name) };
    finished.inc({ ...labels, outcome: "dead_lettered" });
    deadLettered.inc({ ...labels, reason: e.reason });
    if (e.reason === "crash_loop") crashLooped.inc(labels);
    if (e.reason === "max_attempts_exceeded" || e.reason === "invalid_result") failed.inc(labels);
    if (e.duration_ms !== undefined)
      duration.observe({ ...labels, outcome: "failed" }, e.duration_ms / 1000);
  });
  on("job_frozen", (e) => {
    settle(e.worker_id, e.job_id);
    stepsFrozen.inc({ queue: e.queue, job: job(e.job_name) });
  });
  on("job_cancelled", (e) =>
    finished.inc({ queue: e.queue, job: job(e.job_name), outcome: "cancelled" }),
  );
  on("job_recovered", (e) => recovered.inc({ queue: e.queue, job: job(e.job_name) }));
  on("job_fenced_out", (e) => {
    settle(e.worker_id, e.job_id);
    fenced.inc({ op: e.op });
  });
  on("shutdown_nack", (e) => {
    settle(e.worker_id, e.job_id);
    nacks.inc({ queue: e.queue, job: job(e.job_name) });
  });
  on("remote_phase", (e) => {
    if (e.phase === "submitting") remoteSubmissions.inc({ job: job(e.job_name) });
    if (e.phase === "frozen") remoteFrozen.inc({ job: job(e.job_name) });
    if (e.phase === "accepted") remoteAccepted.inc({ job: job(e.job_name) });
  });
  on("remote_handoff", (e) =>
    remoteHandoffs.inc({ job: job(e.job_name), action: e.handoff_action, reason: e.reason }),
  );
  on("remote_submit", (e) =>
    remoteCallDuration.observe(
      { job: job(e.job_name), call: "submit", outcome: e.outcome },
      e.duration_ms / 1000,
    ),
  );
  on("remote_reconcile", (e) => {
    remoteReconciles.inc({ job: job(e.job_name), outcome: e.outcome });
    remoteCallDuration.observe(
      { job: job(e.job_name), call: "reconcile", outcome: e.outcome },
      e.duration_ms / 1000,
    );
  });
  on("remote_poll", (e) => {
    remotePolls.inc({ job: job(e.job_name), outcome: e.outcome });
    if (e.duration_ms !== null) {
      remoteCallDuration.observe(
        { job: job(e.job_name), call: "poll", outcome: e.outcome },
        e.duration_ms / 1000,
      );
    }
  });
  on("queue_metrics", (e) => {
    sample = { at: clock(), queues: e.queues, exits: e.worker_exits, flows: e.flows_finished };
  });
  on("jobs_waiting_for_worker", (e) => {
    waiting = { at: clock(), entries: e.waiting };
  });
  on("drain_started", (e) => {
    states.set(e.worker_id, "draining");
    drainStarts.set(e.worker_id, Date.parse(e.drain_started_at));
  });
  on("force_timeout_path", (e) => states.set(e.worker_id, "force_timeout_path"));
  on("wait_for_thread", (e) => states.set(e.worker_id, "wait_for_thread"));
  on("worker_stopped", (e) => {
    if (states.delete(e.worker_id)) stoppedWorkers += 1;
    inFlightByWorker.delete(e.worker_id);
    if (e.exit_reason === "start_failed") return;
    drains.inc({ exit_reason: e.exit_reason });
    const startedAt = drainStarts.get(e.worker_id);
    drainStarts.delete(e.worker_id);
    if (startedAt !== undefined && Number.isFinite(startedAt)) {
      drainDuration.observe(
        { exit_reason: e.exit_reason },
        Math.max(0, clock() - startedAt) / 1000,
      );
    }
  });

  return {
    registry,
    contentType: registry.contentType,
    scrape: () => registry.metrics(),
    close() {
      for (const unsubscribe of off.splice(0)) unsubscribe();
    },
  };
}
