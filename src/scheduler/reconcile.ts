/**
 * Reconciliation of the schedules declared in code with the rows of `soniq_schedules` (run when a
 * worker starts and by `soniq schedules sync`): upsert by id; a changed expression (cron, every,
 * time zone or bounds) recomputes the cursor from the database's now; other changes keep it;
 * undeclared rows are kept and warned about, or deleted with `prune`. Each write is conditional on
 * the row's revision, so concurrent reconcilers (several workers starting) cannot lose an update.
 */
import type { Backend } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import { validateArgs } from "../jobs/job-definition.js";
import type { Logger } from "../observability/logger.js";
import { type ScheduleDefinition, specChanged, timingChanged } from "./schedule-definition.js";

/** What one reconciliation did, by schedule id. */
export interface SyncReport {
  created: string[];
  updated: string[];
  unchanged: string[];
  /** Rows no definition declares (kept unless pruned). */
  undeclared: string[];
  /** Undeclared rows deleted (with `prune`). */
  pruned: string[];
}

/** Tries of one schedule's conditional write before giving up (each lost try re-reads the row). */
const TRIES = 5;

/**
 * Validates every definition's arguments against its job's schema (also asynchronous schemas),
 * then upserts them. Nothing is written when any definition's arguments fail.
 * @throws SoniqError `INVALID_ARGS` (nothing written); `SCHEMA_NOT_READY`; `CLOSED`; an Error when
 * a schedule kept changing under `TRIES` conditional writes.
 */
export async function reconcileSchedules(
  backend: Backend,
  definitions: Iterable<ScheduleDefinition>,
  logger: Logger,
  options: { prune?: boolean } = {},
): Promise<SyncReport> {
  const declared = [...definitions];
  for (const definition of declared) {
    const schema = definition.job.argsSchema;
    if (!schema) continue;
    const checked = await validateArgs(schema, definition.args);
    if (!checked.ok) {
      throw new SoniqError(
        "INVALID_ARGS",
        `schedule ${definition.spec.id}: arguments of ${definition.job.name}: ${checked.message}`,
        { details: { schedule: definition.spec.id } },
      );
    }
  }
  const report: SyncReport = {
    created: [],
    updated: [],
    unchanged: [],
    undeclared: [],
    pruned: [],
  };
  const store = backend;
  for (const definition of declared) {
    const { spec, recurrence } = definition;
    let done = false;
    for (let attempt = 0; attempt < TRIES && !done; attempt += 1) {
      const row = await store.scheduleGet({ id: spec.id });
      const now = (await backend.now()).getTime();
      if (!row) {
        if (
          await store.scheduleSave({
            spec,
            nextRunAt: nullable(recurrence.next(now)),
            expectRevision: null,
          })
        ) {
          report.created.push(spec.id);
          logger.info({ schedule: spec.id }, "schedule created");
          done = true;
        }
        continue;
      }
      if (!specChanged(row, spec)) {
        report.unchanged.push(spec.id);
        done = true;
        continue;
      }
      const timing = timingChanged(row, spec);
      const next = timing ? nullable(recurrence.next(now)) : row.nextRunAt;
      if (await store.scheduleSave({ spec, nextRunAt: next, expectRevision: row.revision })) {
        report.updated.push(spec.id);
        logger.info(
          { schedule: spec.id, next_run_at: next?.toISOString() ?? null, timing_changed: timing },
          timing ? "schedule updated; next occurrence recomputed" : "schedule updated",
        );
        done = true;
      }
    }
    if (!done) throw new Error(`schedule ${spec.id} kept changing while it was being synced`);
  }
  const ids = new Set(declared.map((d) => d.spec.id));
  for (const row of await store.scheduleList()) {
    if (ids.has(row.id)) continue;
    report.undeclared.push(row.id);
    if (options.prune) {
      if (await store.scheduleRemove({ id: row.id })) report.pruned.push(row.id);
      logger.warn({ schedule: row.id }, "schedule not declared in code: pruned");
    } else {
      logger.warn(
        { schedule: row.id },
        "schedule not declared in code (renamed or removed?): kept; `soniq schedules sync --prune` deletes it",
      );
    }
  }
  return report;
}

function nullable(ms: number | null): Date | null {
  return ms === null ? null : new Date(ms);
}
