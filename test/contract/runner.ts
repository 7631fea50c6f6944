/**
 * The shared backend contract suite: composes the areas under areas/ into one describe block per
 * backend. memory.test.ts, sqlite.test.ts and postgres.test.ts each run it, with the submission
 * store's contract, on their kind of store ({@link runContracts}).
 */
import { describe } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import {
  type BackendKind,
  isShared,
  type UseBackendsOptions,
  useBackends,
} from "../helpers/test-backends.js";
import { adminBulkCases } from "./areas/admin-bulk.js";
import { adminCancelCases } from "./areas/admin-cancel.js";
import { adminDeadLetterCases } from "./areas/admin-dlq.js";
import { adminListCases } from "./areas/admin-list.js";
import { adminNulArgsCases } from "./areas/admin-nul-args.js";
import { adminProgressCases } from "./areas/admin-progress.js";
import { adminQueueCases } from "./areas/admin-queues.js";
import { adminScheduledCases } from "./areas/admin-scheduled.js";
import { adminWorkerCases } from "./areas/admin-workers.js";
import { claimCases } from "./areas/claim.js";
import { deadLetterCases } from "./areas/dead-letter.js";
import { enqueueCases } from "./areas/enqueue.js";
import { fencedWritesCases } from "./areas/fenced-writes.js";
import { finishedMoveCases } from "./areas/finished-move.js";
import { jobHistoryCases } from "./areas/job-history.js";
import { jobVersionCases } from "./areas/job-versions.js";
import { leasesCases } from "./areas/leases.js";
import { lifecycleCases } from "./areas/lifecycle.js";
import { notifyCases } from "./areas/notify.js";
import { pruneForgetCases } from "./areas/prune-forget.js";
import { queueMetricsCases } from "./areas/queue-metrics.js";
import { recoveryCases } from "./areas/recovery.js";
import { schedulesCases } from "./areas/schedules.js";
import { traceContextCases } from "./areas/trace-context.js";
import { workersCases } from "./areas/workers.js";
import type { ContractTarget } from "./helpers.js";
import { runSubmissionContract } from "./submission-contract.js";

export { type ContractTarget, newJob } from "./helpers.js";

/** How a target reaches its stores: {@link UseBackendsOptions}, and the describe label. */
export interface TargetOptions extends UseBackendsOptions {
  /** Names the describe blocks (default: the kind). */
  label?: string;
}

/**
 * The target of `kind`: test-backends.ts's stores for the enclosing block (or file), with
 * `share` when another process reaches them. Registers hooks: call it while collecting.
 */
export function contractTarget(kind: BackendKind, options: TargetOptions = {}): ContractTarget {
  const stores = useBackends(kind, options);
  const share = (backend: Backend) => {
    const address = stores.address(backend);
    if (!address) throw new Error(`no address reaches a ${kind} store`);
    // The schema is a PostgreSQL notion; the other backends ignore it.
    return { databaseUrl: address.databaseUrl, schema: address.schema ?? "public" };
  };
  return {
    label: options.label ?? kind,
    make: () => stores.open(),
    ...(isShared(kind) ? { share } : {}),
  };
}

/**
 * The backend and submission store contracts on stores of `kind`. Each case makes its backends
 * inside its body and they are closed when it ends, so a suite of many cases never holds more
 * PostgreSQL connections than one case needs (the server is shared).
 */
export function runContracts(kind: BackendKind, options: TargetOptions = {}): void {
  const target = contractTarget(kind, options);
  runBackendContract(target);
  runSubmissionContract(target);
}

/** Runs every contract area against `target`. */
export function runBackendContract(target: ContractTarget): void {
  describe(`backend contract: ${target.label}`, () => {
    const ctx = { make: () => target.make(), target };
    lifecycleCases(ctx);
    enqueueCases(ctx);
    claimCases(ctx);
    fencedWritesCases(ctx);
    deadLetterCases(ctx);
    recoveryCases(ctx);
    workersCases(ctx);
    leasesCases(ctx);
    notifyCases(ctx);
    pruneForgetCases(ctx);
    finishedMoveCases(ctx);
    adminListCases(ctx);
    adminNulArgsCases(ctx);
    adminScheduledCases(ctx);
    adminCancelCases(ctx);
    adminBulkCases(ctx);
    adminDeadLetterCases(ctx);
    adminQueueCases(ctx);
    adminProgressCases(ctx);
    adminWorkerCases(ctx);
    schedulesCases(ctx);
    queueMetricsCases(ctx);
    jobHistoryCases(ctx);
    traceContextCases(ctx);
    jobVersionCases(ctx);
  });
}
