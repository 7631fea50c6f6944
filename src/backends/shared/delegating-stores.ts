/**
 * The delegating base of the backend facades: the job, worker, lease and schedule store methods, each
 * passed to the entity store that implements it (memory and PostgreSQL keep one file per store).
 */
import type {
  ClaimedJob,
  DeadLetterRow,
  DueSchedules,
  EnqueueResult,
  JobCancelParams,
  JobCheckpointParams,
  JobClaimParams,
  JobCompleteManyParams,
  JobCompleteParams,
  JobDeadLetterParams,
  JobEnqueueParams,
  JobFreezeStepParams,
  JobIdParams,
  JobMarkStartedParams,
  JobNackManyParams,
  JobNackParams,
  JobOwnedByParams,
  JobPauseKeyParams,
  JobPauseQueueParams,
  JobPruneFinishedParams,
  JobRecoverStaleParams,
  JobResumeReadParams,
  JobResumeState,
  JobRetryParams,
  JobRow,
  JobSnoozeParams,
  JobStepsResolveParams,
  JobStore,
  LeaseResignParams,
  LeaseStore,
  LeaseTryTakeParams,
  OwnedJob,
  QueueMetrics,
  QueueStats,
  RecoveryResult,
  ScheduleAdvanceParams,
  ScheduleAdvanceResult,
  ScheduleDueParams,
  ScheduleIdParams,
  ScheduleRow,
  ScheduleRunRow,
  ScheduleRunsParams,
  ScheduleSaveParams,
  ScheduleStore,
  WorkerExitCount,
  WorkerForgetParams,
  WorkerHeartbeatParams,
  WorkerListParams,
  WorkerListRow,
  WorkerMarkStoppedParams,
  WorkerRegisterParams,
  WorkerStore,
} from "../contract/index.js";

/** The entity stores a facade delegates to. */
export interface EntityStores {
  /** Jobs and dead-letter entries. */
  jobs: JobStore;
  /** Worker incarnations. */
  workers: WorkerStore;
  /** Leader leases. */
  leases: LeaseStore;
  /** Schedules and their history. */
  schedules: ScheduleStore;
}

/** The store half of a backend facade: every method delegates to {@link EntityStores}. */
export abstract class DelegatingStores implements JobStore, WorkerStore, LeaseStore, ScheduleStore {
  /** @param stores The entity stores. */
  constructor(protected readonly stores: EntityStores) {}

  /** See {@link JobStore.jobEnqueue}. */
  jobEnqueue(params: JobEnqueueParams): Promise<EnqueueResult[]> {
    return this.stores.jobs.jobEnqueue(params);
  }
  /** See {@link JobStore.jobClaim}. */
  jobClaim(params: JobClaimParams): Promise<ClaimedJob[]> {
    return this.stores.jobs.jobClaim(params);
  }
  /** See {@link JobStore.jobComplete}. */
  jobComplete(params: JobCompleteParams): Promise<boolean> {
    return this.stores.jobs.jobComplete(params);
  }
  /** See {@link JobStore.jobCompleteMany}. */
  jobCompleteMany(params: JobCompleteManyParams): Promise<boolean[]> {
    return this.stores.jobs.jobCompleteMany(params);
  }
  /** See {@link JobStore.jobRetry}. */
  jobRetry(params: JobRetryParams): Promise<boolean> {
    return this.stores.jobs.jobRetry(params);
  }
  /** See {@link JobStore.jobDeadLetter}. */
  jobDeadLetter(params: JobDeadLetterParams): Promise<boolean> {
    return this.stores.jobs.jobDeadLetter(params);
  }
  /** See {@link JobStore.jobSnooze}. */
  jobSnooze(params: JobSnoozeParams): Promise<boolean> {
    return this.stores.jobs.jobSnooze(params);
  }
  /** See {@link JobStore.jobPauseKey}. */
  jobPauseKey(params: JobPauseKeyParams): Promise<void> {
    return this.stores.jobs.jobPauseKey(params);
  }
  /** See {@link JobStore.jobPauseQueue}. */
  jobPauseQueue(params: JobPauseQueueParams): Promise<void> {
    return this.stores.jobs.jobPauseQueue(params);
  }
  /** See {@link JobStore.jobMarkStarted}. */
  jobMarkStarted(params: JobMarkStartedParams): Promise<boolean> {
    return this.stores.jobs.jobMarkStarted(params);
  }
  /** See {@link JobStore.jobCheckpoint}. */
  jobCheckpoint(params: JobCheckpointParams): Promise<boolean> {
    return this.stores.jobs.jobCheckpoint(params);
  }
  /** See {@link JobStore.jobResumeRead}. */
  jobResumeRead(params: JobResumeReadParams): Promise<JobResumeState | null> {
    return this.stores.jobs.jobResumeRead(params);
  }
  /** See {@link JobStore.jobFreezeStep}. */
  jobFreezeStep(params: JobFreezeStepParams): Promise<boolean> {
    return this.stores.jobs.jobFreezeStep(params);
  }
  /** See {@link JobStore.jobResumeClear}. */
  jobResumeClear(params: JobIdParams): Promise<boolean> {
    return this.stores.jobs.jobResumeClear(params);
  }
  /** See {@link JobStore.jobStepsResolve}. */
  jobStepsResolve(params: JobStepsResolveParams): Promise<boolean> {
    return this.stores.jobs.jobStepsResolve(params);
  }

  /** See {@link JobStore.jobNack}. */
  jobNack(params: JobNackParams): Promise<boolean> {
    return this.stores.jobs.jobNack(params);
  }
  /** See {@link JobStore.jobNackMany}. */
  jobNackMany(params: JobNackManyParams): Promise<boolean[]> {
    return this.stores.jobs.jobNackMany(params);
  }
  /** See {@link JobStore.jobCancel}. */
  jobCancel(params: JobCancelParams): Promise<boolean> {
    return this.stores.jobs.jobCancel(params);
  }
  /** See {@link JobStore.jobGet}. */
  jobGet(params: JobIdParams): Promise<JobRow | null> {
    return this.stores.jobs.jobGet(params);
  }
  /** See {@link JobStore.jobStats}. */
  jobStats(): Promise<QueueStats> {
    return this.stores.jobs.jobStats();
  }
  /** See {@link JobStore.jobQueueMetrics}. */
  jobQueueMetrics(): Promise<QueueMetrics[]> {
    return this.stores.jobs.jobQueueMetrics();
  }
  /** See {@link JobStore.jobPruneFinished}. */
  jobPruneFinished(params: JobPruneFinishedParams): Promise<number> {
    return this.stores.jobs.jobPruneFinished(params);
  }
  /** See {@link JobStore.jobRecoverStale}. */
  jobRecoverStale(params: JobRecoverStaleParams): Promise<RecoveryResult> {
    return this.stores.jobs.jobRecoverStale(params);
  }
  /** See {@link JobStore.jobOwnedBy}. */
  jobOwnedBy(params: JobOwnedByParams): Promise<OwnedJob[]> {
    return this.stores.jobs.jobOwnedBy(params);
  }
  /** See {@link JobStore.deadLetterGet}. */
  deadLetterGet(params: JobIdParams): Promise<DeadLetterRow | null> {
    return this.stores.jobs.deadLetterGet(params);
  }
  /** See {@link JobStore.deadLetterReplay}. */
  deadLetterReplay(params: JobIdParams): Promise<boolean> {
    return this.stores.jobs.deadLetterReplay(params);
  }

  /** See {@link WorkerStore.workerRegister}. */
  workerRegister(params: WorkerRegisterParams): Promise<void> {
    return this.stores.workers.workerRegister(params);
  }
  /** See {@link WorkerStore.workerHeartbeat}. */
  workerHeartbeat(params: WorkerHeartbeatParams): Promise<void> {
    return this.stores.workers.workerHeartbeat(params);
  }
  /** See {@link WorkerStore.workerMarkStopped}. */
  workerMarkStopped(params: WorkerMarkStoppedParams): Promise<void> {
    return this.stores.workers.workerMarkStopped(params);
  }
  /** See {@link WorkerStore.workerExitCounts}. */
  workerExitCounts(): Promise<WorkerExitCount[]> {
    return this.stores.workers.workerExitCounts();
  }
  /** See {@link WorkerStore.workerList}. */
  workerList(params: WorkerListParams): Promise<WorkerListRow[]> {
    return this.stores.workers.workerList(params);
  }
  /** See {@link WorkerStore.workerForget}. */
  workerForget(params: WorkerForgetParams): Promise<number> {
    return this.stores.workers.workerForget(params);
  }

  /** See {@link LeaseStore.leaseTryTake}. */
  leaseTryTake(params: LeaseTryTakeParams): Promise<boolean> {
    return this.stores.leases.leaseTryTake(params);
  }
  /** See {@link LeaseStore.leaseResign}. */
  leaseResign(params: LeaseResignParams): Promise<void> {
    return this.stores.leases.leaseResign(params);
  }

  /** See {@link ScheduleStore.scheduleSave}. */
  scheduleSave(params: ScheduleSaveParams): Promise<boolean> {
    return this.stores.schedules.scheduleSave(params);
  }
  /** See {@link ScheduleStore.scheduleGet}. */
  scheduleGet(params: ScheduleIdParams): Promise<ScheduleRow | null> {
    return this.stores.schedules.scheduleGet(params);
  }
  /** See {@link ScheduleStore.scheduleList}. */
  scheduleList(): Promise<ScheduleRow[]> {
    return this.stores.schedules.scheduleList();
  }
  /** See {@link ScheduleStore.scheduleDue}. */
  scheduleDue(params: ScheduleDueParams): Promise<DueSchedules> {
    return this.stores.schedules.scheduleDue(params);
  }
  /** See {@link ScheduleStore.scheduleAdvance}. */
  scheduleAdvance(params: ScheduleAdvanceParams): Promise<ScheduleAdvanceResult> {
    return this.stores.schedules.scheduleAdvance(params);
  }
  /** See {@link ScheduleStore.scheduleRemove}. */
  scheduleRemove(params: ScheduleIdParams): Promise<boolean> {
    return this.stores.schedules.scheduleRemove(params);
  }
  /** See {@link ScheduleStore.scheduleRuns}. */
  scheduleRuns(params: ScheduleRunsParams): Promise<ScheduleRunRow[]> {
    return this.stores.schedules.scheduleRuns(params);
  }
}
