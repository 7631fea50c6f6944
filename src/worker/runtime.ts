/**
 * What `Worker.start()` builds once the backend is open and the worker row registered: every part
 * of a running worker, wired together, none optional. Starting and closing down its services are
 * here too, so the public Worker only sequences them.
 */
import type { Backend, ClaimedJob, JobCheckpointParams } from "../backends/contract/index.js";
import type { DependencyReader } from "../jobs/context.js";
import type { JobDefinition } from "../jobs/job-definition.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import type { Logger } from "../observability/logger.js";
import { CircuitBreaker } from "../remote/circuit-breaker.js";
import type { SoniqSettings } from "../settings.js";
import { CLAIM_LOOP_STOP_BOUND_MS, ClaimLoop } from "./claim-loop.js";
import { CompletionBatcher } from "./completion-batcher.js";
import { Drain } from "./drain.js";
import { orphanSources, WorkerHandOff } from "./hand-off.js";
import { type BeatReport, HEARTBEAT_STOP_BOUND_MS, Heartbeat } from "./heartbeat.js";
import type { InFlightTable } from "./in-flight.js";
import { JobRunner } from "./job-runner.js";
import {
  OutcomeRecorder,
  type OutcomeRecorderOptions,
  type RecordedOutcome,
} from "./outcome-recorder.js";
import { PrefetchBuffer, prefetchTtlMs } from "./prefetch-buffer.js";
import { collectProgress } from "./progress-reports.js";
import { releaseUnstarted } from "./release-unstarted.js";
import type { RemoteDeps } from "./remote-outcomes.js";
import { RemotePollRunner } from "./remote-poll.js";
import { RemotePoller } from "./remote-poller.js";
import { RemoteSubmitter } from "./remote-submit.js";
import type { ShutdownMachine } from "./shutdown-machine.js";
import { ThreadCheckpoints } from "./thread-checkpoints.js";
import { ThreadDependencies } from "./thread-dependencies.js";
import type { WakeLatch } from "./wake-latch.js";
import { WorkerMaintenance } from "./worker-maintenance.js";
import { WorkerSchedules } from "./worker-schedules.js";
import { WorkerThreads } from "./worker-threads.js";
import { retryWrite } from "./write-retry.js";

/** The settings of one worker (instance settings with the worker's overrides applied). */
export type WorkerSettings = SoniqSettings & { concurrency: number; queues: string[] | null };

/** What the runtime is built from. */
export interface RuntimeParts {
  backend: Backend;
  workerId: string;
  settings: WorkerSettings;
  jobs: ReadonlyMap<string, JobDefinition<unknown, unknown, unknown>>;
  logger: Logger;
  events: EventBus<SoniqEventMap>;
  machine: ShutdownMachine;
  table: InFlightTable;
  latch: WakeLatch;
  /** Subscribes to schedule changes made through the instance (wakes the scheduler). */
  onSchedulesChanged?: (listener: () => void) => () => void;
  /** @internal See {@link OutcomeRecorderOptions.observe}. */
  observeOutcome?: (recorded: RecordedOutcome) => void;
}

/** A started worker's parts. */
export interface WorkerRuntime {
  readonly backend: Backend;
  readonly completions: CompletionBatcher;
  readonly recorder: OutcomeRecorder;
  readonly runner: JobRunner;
  readonly threads: WorkerThreads;
  readonly claimLoop: ClaimLoop;
  /** Takes jobs at enqueue from this process's pool enqueues (hand-off.ts); opened once claiming. */
  readonly handOff: WorkerHandOff;
  /** Polls and reconciles remote jobs in custody (absent without remote jobs). */
  readonly remotePoller: RemotePoller | undefined;
  readonly heartbeat: Heartbeat;
  readonly maintenance: WorkerMaintenance;
  readonly schedules: WorkerSchedules;
  readonly drain: Drain;
  /** Ends the backend wake-up subscription. */
  readonly unsubscribe: () => void;
  /** Ends the cancel-request subscription. */
  readonly unsubscribeCancel: () => void;
}

/** What the heartbeat reports from the shutdown machine (times relative to now, in seconds). */
export function beatReport(machine: ShutdownMachine): BeatReport {
  const now = machine.now();
  const started = machine.drainStartedAt;
  const deadline = machine.deadlineAt;
  return {
    status: machine.state === "RUNNING" ? "running" : "draining",
    shutdownState: machine.state,
    drainElapsedSeconds: started === undefined ? null : Math.max(0, now - started) / 1000,
    deadlineInSeconds: deadline === undefined ? null : (deadline - now) / 1000,
  };
}

/** Builds the runtime and subscribes to the backend's wake-ups; starts nothing else. */
export function buildRuntime(parts: RuntimeParts): WorkerRuntime {
  const { backend, workerId, settings, logger, events, machine, table, latch } = parts;
  const completions = new CompletionBatcher({
    backend,
    retentionSeconds: settings.resultRetention,
    logger,
  });
  const recorder = new OutcomeRecorder({
    backend,
    completions,
    workerId,
    logger,
    events,
    machine,
    maxPayloadBytes: settings.maxPayloadBytes,
    retentionSeconds: settings.resultRetention,
    ...(parts.observeOutcome ? { observe: parts.observeOutcome } : {}),
  });
  const threads = new WorkerThreads(workerId, settings.syncHandlerPoolSize, () => latch.wake());
  const remote = buildRemote(parts, recorder);
  const startTtlMs = prefetchTtlMs(settings.heartbeatInterval, settings.heartbeatTimeout);
  const releaseDeps = {
    backend,
    workerId,
    logger,
    events,
    writeWithRetry: <T>(write: () => Promise<T>, what: string) =>
      recorder.writeWithRetry(write, what),
  };
  const resumeDeps = {
    // A checkpoint or step record waits out a database outage like an outcome does (retried, the
    // handler's await pending): an outage is not the handler's failure and spends no attempt.
    write: (params: JobCheckpointParams) =>
      retryWrite(
        { machine, logger },
        {
          write: () => backend.jobCheckpoint(params),
          what: "checkpoint",
          jobId: params.id,
          bookkeeping: false,
          bounded: false,
        },
      ),
    maxPayloadBytes: settings.maxPayloadBytes,
  };
  const readDependencies: DependencyReader = async (jobId) =>
    (await backend.flows.flowDependencies({ jobId })).map((d) => ({
      id: d.id,
      state: d.state,
      result: d.result === null ? null : JSON.parse(d.result),
    }));
  const runner = new JobRunner({
    startTtlMs,
    releaseStale: (job) => releaseUnstarted(releaseDeps, [job], "ttl"),
    jobs: parts.jobs,
    workerId,
    logger,
    events,
    logArgs: settings.logArgs,
    shutdownSettleSeconds: settings.shutdownSettle,
    machine,
    table,
    recorder,
    threads,
    remote: remote.submitter,
    rescueRemote: (entry) => remote.pollRunner.rescue(entry),
    resume: { ...resumeDeps, read: (params) => backend.jobResumeRead(params) },
    dependencies: readDependencies,
  });
  threads.checkpoints = new ThreadCheckpoints(workerId, table, resumeDeps);
  threads.dependencies = new ThreadDependencies(workerId, table, readDependencies);
  const remotePoller =
    remote.definitions.size === 0
      ? undefined
      : new RemotePoller({
          backend,
          workerId,
          logger,
          machine,
          table,
          concurrency: settings.concurrency,
          intervalMs: settings.pollInterval * 1000,
          definitions: remote.definitions,
          runner: remote.pollRunner,
          parseArgs: async (job) => {
            const dispatched = await runner.dispatch(job);
            return dispatched.kind === "run" ? dispatched.args : undefined;
          },
        });
  const onUnexpected = (job: Parameters<JobRunner["recordUnexpected"]>[0], err: unknown) =>
    runner.recordUnexpected(job, err);
  const now = () => machine.now();
  // How claimed rows reach the runner: the claim loop's and the hand-off's one path.
  const dispatch = (job: ClaimedJob) => {
    table.track(job, (entry) => runner.run(entry), onUnexpected);
  };
  const releaseLate = (job: ClaimedJob) => {
    table.track(job, () => recorder.releaseUnstarted(job), onUnexpected);
  };
  const runnable = registeredRunnable(parts.jobs, (jobVersions) => {
    // Definitions added after the start: the worker row says so, so that the leader does not
    // report (or, with `unclaimableAfter`, dead-letter) jobs this worker now runs.
    backend.admin.workerRecordJobs({ workerId, jobVersions }).catch((err: unknown) => {
      logger.warn({ err }, "could not record the worker's job names; the next addition retries");
    });
  });
  const claimLoop = new ClaimLoop({
    backend,
    workerId,
    queues: settings.queues,
    names: () => runnable().names,
    versions: () => runnable().versions,
    concurrency: settings.concurrency,
    pollIntervalSeconds: settings.pollInterval,
    table,
    latch,
    logger,
    now,
    dispatch,
    releaseLate,
    releaseUnstarted: (jobs, reason) => releaseUnstarted(releaseDeps, jobs, reason),
    startTtlMs,
    ...(settings.prefetch > 0
      ? {
          prefetch: new PrefetchBuffer({
            max: settings.prefetch,
            ttlMs: startTtlMs,
            now,
          }),
        }
      : {}),
  });
  const handOff = new WorkerHandOff({
    workerId,
    queues: settings.queues,
    canRun: (name, version) => (parts.jobs.get(name)?.version ?? 0) >= version,
    concurrency: settings.concurrency,
    table,
    machine,
    logger,
    // Idle: no claim in flight and nothing buffered (a buffered row is older than the enqueue).
    idle: () =>
      claimLoop.state === "running" && !claimLoop.claimInFlight && claimLoop.buffered === 0,
    dispatch,
    // One row, NACK'd as a late claim's rows are: one write, its event and its timeline entry.
    releaseLate: (job, reason) => {
      table.track(
        job,
        async () => {
          await releaseUnstarted(releaseDeps, [job], reason);
        },
        onUnexpected,
      );
    },
    startTtlMs,
    now,
  });
  // An operator's cancel reaches a running job through its entry (executors do the rest); a job
  // still in the prefetch buffer never starts: it is recorded cancelled at once.
  const cancelJob = (jobId: string) => {
    const buffered = claimLoop.unbuffer(jobId);
    if (buffered) {
      logger.info({ job_id: jobId }, "cancel requested by an operator: the job had not started");
      table.track(
        buffered,
        async (entry) => {
          table.freeSlot(entry);
          await recorder.recordOutcome(
            buffered,
            { kind: "cancelled" },
            parts.jobs.get(buffered.name),
          );
        },
        onUnexpected,
      );
      return;
    }
    const entry = table.get(jobId);
    if (!entry || entry.cancel.aborted) return;
    logger.info({ job_id: jobId }, "cancel requested by an operator: stopping the job");
    entry.cancel.abort();
  };
  const schedules = new WorkerSchedules({
    backend,
    workerId,
    logger,
    events,
    // The maintenance lease's life: three heartbeat intervals (maintenance.ts).
    leaseSeconds: settings.heartbeatInterval * 3,
    running: () => machine.state === "RUNNING",
    ...(parts.onSchedulesChanged ? { onChanged: parts.onSchedulesChanged } : {}),
  });
  const heartbeat = new Heartbeat({
    backend,
    workerId,
    intervalSeconds: settings.heartbeatInterval,
    logger,
    report: () => beatReport(machine),
    progress: () => collectProgress(table),
    onCancelRequested: (ids) => {
      for (const id of ids) cancelJob(id);
    },
    isTracked: (jobId) => table.has(jobId) || claimLoop.buffers(jobId),
    orphans: orphanSources(claimLoop, handOff),
    now: () => machine.now(),
    afterBeat: (signal) => schedules.catchUp(signal),
  });
  const maintenance = new WorkerMaintenance({
    backend,
    workerId,
    settings,
    longestResultRetention: longestRetention(settings.resultRetention, parts.jobs.values()),
    logger,
    events,
    healthySeconds: () => heartbeat.healthySeconds(),
    now: () => machine.now(),
    leaderServices: [schedules.service],
  });
  const drain = new Drain({
    machine,
    workerId,
    logger,
    events,
    table,
    threads,
    stopClaiming: async () => {
      await Promise.all([
        claimLoop.stop(),
        remotePoller?.stop(),
        handOff.close(CLAIM_LOOP_STOP_BOUND_MS),
      ]);
    },
    abandonClaim: () => {
      claimLoop.abandonClaim();
      handOff.abandon();
    },
    onDrainStart: () => {
      latch.wake();
      // Report `draining` now — unless the worker holds nothing (no claimed job, no claim or
      // hand-off reply awaited, nothing buffered): then the drain ends at once and the row goes
      // straight to `stopped`, one write fewer on the stop path. Maintenance stops (the scheduler
      // with it: nothing is enqueued once draining) and hands the lease on.
      const holds =
        table.size > 0 ||
        claimLoop.claimInFlight ||
        claimLoop.buffered > 0 ||
        handOff.pendingCount > 0;
      if (holds) void heartbeat.runNow();
      schedules.close();
      void maintenance.stop();
    },
    closeDown: async (exitReason) => {
      // Heartbeats went on until every claimed row was finished or released; now they may stop.
      // Every outcome is settled, so the batcher has nothing queued; a write of it still in flight
      // was given up by its caller and is waited for no longer than the heartbeat.
      await Promise.all([heartbeat.stop(), completions.stop(HEARTBEAT_STOP_BOUND_MS)]);
      unsubscribe();
      unsubscribeCancel();
      unwatchState();
      try {
        await recorder.writeWithRetry(
          () =>
            backend.workerMarkStopped({
              workerId,
              ...(exitReason === "start_failed" ? {} : { exitReason }),
            }),
          "worker's stopped status",
          undefined,
          true,
        );
      } catch {
        // already logged by writeWithRetry()
      }
    },
    outcomes: recorder,
  });
  const queues = settings.queues;
  const unsubscribe = backend.notifier.subscribe((queue) => {
    if (queue === "*" || queues === null || queues.includes(queue)) latch.wake();
  });
  const unsubscribeCancel = backend.admin.subscribeCancel(cancelJob);
  // Each later shutdown state (FORCE_TIMEOUT_PATH, WAIT_FOR_THREAD) reaches the worker row at once.
  const unwatchState = machine.subscribe((state) => {
    if (state !== "RUNNING" && state !== "DRAINING" && state !== "STOPPED") {
      void heartbeat.runNow();
    }
  });
  return {
    unsubscribeCancel,
    backend,
    completions,
    recorder,
    runner,
    threads,
    claimLoop,
    handOff,
    remotePoller,
    heartbeat,
    maintenance,
    schedules,
    drain,
    unsubscribe,
  };
}

/** The remote-job parts (docs/remote-jobs.md): the submitter, the poll runner, the breakers. */
function buildRemote(parts: RuntimeParts, recorder: OutcomeRecorder) {
  const definitions = new Map(
    [...parts.jobs].filter(([, definition]) => definition.kind === "remote"),
  );
  const breakers = new Map<string, CircuitBreaker>();
  for (const [name, definition] of definitions) {
    const options = definition.remote?.circuitBreaker;
    if (options) breakers.set(name, new CircuitBreaker(options, () => parts.machine.now()));
  }
  const deps: RemoteDeps = {
    backend: parts.backend,
    workerId: parts.workerId,
    logger: parts.logger,
    events: parts.events,
    machine: parts.machine,
    recorder,
    settleSeconds: parts.settings.shutdownSettle,
    retentionSeconds: parts.settings.resultRetention,
    maxPayloadBytes: parts.settings.maxPayloadBytes,
    breaker: (name) => breakers.get(name),
  };
  return {
    definitions,
    submitter: new RemoteSubmitter(deps),
    pollRunner: new RemotePollRunner(deps),
  };
}

/** Starts the services that run from the start: the completion batcher, heartbeat, maintenance. */
export async function startServices(runtime: WorkerRuntime): Promise<void> {
  await runtime.completions.start();
  await runtime.heartbeat.start();
  runtime.maintenance.start();
}

/**
 * The longest `resultRetention` (seconds) of the instance (default 7 days) and of `definitions`
 * (their own `resultRetention`): how far ahead the pruner keeps the finished-jobs partitions.
 */
function longestRetention(
  instance: number | undefined,
  definitions: Iterable<JobDefinition<unknown, unknown, unknown>>,
): number {
  let longest = instance ?? 7 * 86_400;
  for (const d of definitions) longest = Math.max(longest, d.resultRetention ?? 0);
  return longest;
}

/**
 * The names of `jobs` (the instance's definitions: a worker claims only jobs of these names) and,
 * in the same order, each definition's version (it claims only jobs of at most that version), as
 * arrays rebuilt only when a definition was added since the last call, not at every claim.
 * `onAdded` gets every name's version when definitions were added since this was built (the
 * worker registered the ones it had then).
 */
function registeredRunnable(
  jobs: ReadonlyMap<string, { version: number }>,
  onAdded: (jobVersions: Record<string, number>) => void,
): () => { names: readonly string[]; versions: readonly number[] } {
  let runnable: { names: readonly string[]; versions: readonly number[] } = {
    names: [],
    versions: [],
  };
  let size = -1;
  let recorded = jobs.size;
  return () => {
    if (jobs.size !== size) {
      const definitions = [...jobs];
      runnable = {
        names: definitions.map(([name]) => name),
        versions: definitions.map(([, definition]) => definition.version),
      };
      size = jobs.size;
      if (size !== recorded) {
        recorded = size;
        onAdded(Object.fromEntries(definitions.map(([name, d]) => [name, d.version])));
      }
    }
    return runnable;
  };
}
