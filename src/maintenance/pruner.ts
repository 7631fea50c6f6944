/**
 * The pruner: forgets finished jobs whose results have expired (on PostgreSQL by advancing a mark
 * and dropping whole daily partitions, on SQLite row by row: the backend's `jobPruneFinished`), so
 * the history does not grow for ever, and dedup keys whose hold has passed; then dead letters older than `deadLetterRetention`
 * (default 30 days), timeline events older than `jobEventRetention` (default 30 days), the
 * controls (cancel request, progress) of jobs that are gone, and the remote-submission rows
 * (`soniq_remote_submissions`) of jobs that are gone — neither a job row nor a dead letter — so a
 * remote job's submission record lives exactly as long as its job's row or dead letter; and the
 * nodes and edges of flows and batches whose jobs are all gone (a walk over the flow nodes that
 * resumes where the last tick stopped, at most {@link FLOW_PRUNE_STEPS} statements a tick: the
 * job tables are looked up by id, never scanned). A `done` or `cancelled` row keeps its result until its
 * `result_expires_at` (set at completion from the `resultRetention` setting, in seconds); after
 * that the pruner deletes it. Leader-only: the maintainer runs it while this process holds the
 * maintenance lease.
 *
 * Each tick deletes in batches of at most `batchLimit` rows (one statement each, so no single
 * statement holds many row locks) until a batch comes back short, checking for a stop between
 * batches.
 *
 * Options (see {@link PrunerOptions}): `intervalMs` (milliseconds between ticks, default
 * {@link PRUNER_INTERVAL_MS}), `batchLimit` (rows per statement, default
 * {@link PRUNER_BATCH_LIMIT}).
 *
 * Events: none; a tick that deleted rows logs "pruned finished jobs" (debug) with `pruned`,
 * "pruned remote submissions" (debug) with `pruned`, and "pruned flow nodes" (debug) with `pruned`.
 */
import type {
  AdminStore,
  Backend,
  FlowStore,
  SubmissionStore,
} from "../backends/contract/index.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import type { BaseServiceOptions } from "../lifecycle/service.js";
import type { Logger } from "../observability/logger.js";
import { inBatches } from "./batches.js";

/** Default milliseconds between two ticks of the {@link Pruner} (one minute). */
export const PRUNER_INTERVAL_MS = 60_000;

/** Default retention of dead letters and timeline events, in seconds (30 days). */
export const DEFAULT_RETENTION_SECONDS = 30 * 86_400;

/** Default rows the {@link Pruner} deletes per statement. */
export const PRUNER_BATCH_LIMIT = 10_000;

/** Statements of the flow-retention walk per tick (each reads `batchLimit` nodes). */
export const FLOW_PRUNE_STEPS = 10;

/** Options of {@link Pruner}. */
export interface PrunerOptions extends Omit<BaseServiceOptions, "name"> {
  /**
   * The pruning methods of the backend; with `admin`, dead letters, timeline events and orphan job
   * controls are pruned too (contract: admin-store.ts).
   */
  backend: Pick<Backend, "jobPruneFinished"> & {
    admin?: Pick<AdminStore, "deadLetterPrune" | "jobEventsPrune" | "jobControlsPrune">;
    /** With it, submission rows of jobs that are gone are pruned too (contract: submission-store.ts). */
    submissions?: Pick<SubmissionStore, "submissionPrune">;
    /** With it, flows and batches whose jobs are all gone are forgotten (contract: flow-store.ts). */
    flows?: Pick<FlowStore, "flowPrune">;
  };
  /** Seconds a dead letter is kept (`deadLetterRetention`); 0 keeps them for ever. Default 30 days. */
  deadLetterRetentionSeconds?: number;
  /** Seconds a timeline event is kept (`jobEventRetention`); 0 keeps them for ever. Default 30 days. */
  jobEventRetentionSeconds?: number;
  /**
   * The longest result retention of the jobs, in seconds: passed to `jobPruneFinished`, so the
   * PostgreSQL backend keeps its finished-jobs partitions made that far ahead. Default: the
   * backend's (7 days).
   */
  retentionSeconds?: number;
  /** Milliseconds between ticks. Default {@link PRUNER_INTERVAL_MS}. */
  intervalMs?: number;
  /** Rows per delete statement (≥ 1). Default {@link PRUNER_BATCH_LIMIT}. */
  batchLimit?: number;
}

/** See the module comment. */
export class Pruner extends PeriodicService {
  /** Where the flow-retention walk resumes (null: from the start); this leader's only. */
  private flowCursor: string | null = null;

  constructor(options: PrunerOptions) {
    const limit = options.batchLimit ?? PRUNER_BATCH_LIMIT;
    super({
      ...options,
      name: "pruner",
      intervalMs: options.intervalMs ?? PRUNER_INTERVAL_MS,
      immediately: true,
      tick: async (signal) => {
        const { admin } = options.backend;
        const pruned = await inBatches(limit, signal, () =>
          options.backend.jobPruneFinished({
            limit,
            ...(options.retentionSeconds === undefined
              ? {}
              : { retentionSeconds: options.retentionSeconds }),
          }),
        );
        if (pruned > 0) this.logger.debug({ pruned }, "pruned finished jobs");
        if (admin) await pruneAdmin(admin, options, limit, signal, this.logger);
        // After the jobs and dead letters, so a row pruned in this tick frees its submission now.
        const { submissions } = options.backend;
        if (submissions) {
          const subs = await inBatches(limit, signal, () => submissions.submissionPrune({ limit }));
          if (subs > 0) this.logger.debug({ pruned: subs }, "pruned remote submissions");
        }
        // After the jobs and dead letters: a flow whose last job was pruned now goes now.
        const { flows } = options.backend;
        if (flows) {
          let nodes = 0;
          for (let step = 0; step < FLOW_PRUNE_STEPS && !signal.aborted; step += 1) {
            const { next, pruned: n } = await flows.flowPrune({ after: this.flowCursor, limit });
            nodes += n;
            this.flowCursor = next;
            if (next === null) break;
          }
          if (nodes > 0) this.logger.debug({ pruned: nodes }, "pruned flow nodes");
        }
      },
    });
  }
}

/** Dead letters, timeline events and orphan job controls: one tick's admin part. */
async function pruneAdmin(
  admin: NonNullable<PrunerOptions["backend"]["admin"]>,
  options: PrunerOptions,
  limit: number,
  signal: AbortSignal,
  logger: Logger,
): Promise<void> {
  const deadAge = options.deadLetterRetentionSeconds ?? DEFAULT_RETENTION_SECONDS;
  if (deadAge > 0) {
    const dead = await inBatches(limit, signal, () =>
      admin.deadLetterPrune({ olderThanSeconds: deadAge, limit }),
    );
    if (dead > 0) logger.info({ pruned: dead }, "pruned expired dead letters");
  }
  const eventAge = options.jobEventRetentionSeconds ?? DEFAULT_RETENTION_SECONDS;
  if (eventAge > 0) {
    await inBatches(limit, signal, () =>
      admin.jobEventsPrune({ olderThanSeconds: eventAge, limit }),
    );
  }
  await inBatches(limit, signal, () => admin.jobControlsPrune({ limit }));
}
