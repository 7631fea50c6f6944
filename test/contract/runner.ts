/**
 * The shared backend contract suite: composes the areas under areas/ into one describe block per
 * backend. memory.test.ts, sqlite.test.ts and postgres.test.ts each call it with their target.
 */
import { afterAll, afterEach, describe } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { adminBulkCases } from "./areas/admin-bulk.js";
import { adminCancelCases } from "./areas/admin-cancel.js";
import { adminDeadLetterCases } from "./areas/admin-dlq.js";
import { adminListCases } from "./areas/admin-list.js";
import { adminProgressCases } from "./areas/admin-progress.js";
import { adminQueueCases } from "./areas/admin-queues.js";
import { adminWorkerCases } from "./areas/admin-workers.js";
import { claimCases } from "./areas/claim.js";
import { deadLetterCases } from "./areas/dead-letter.js";
import { enqueueCases } from "./areas/enqueue.js";
import { fencedWritesCases } from "./areas/fenced-writes.js";
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

export { type ContractTarget, newJob } from "./helpers.js";

/** Runs every contract area against `target`, closing the backends it made afterwards. */
export function runBackendContract(target: ContractTarget): void {
  describe(`backend contract: ${target.label}`, () => {
    const opened: Backend[] = [];
    const make = async () => {
      const backend = await target.make();
      opened.push(backend);
      return backend;
    };
    // Each case makes its own backends inside its body: close them when it ends, so a suite of many
    // cases never holds more PostgreSQL connections than one case needs (the server is shared).
    afterEach(async () => {
      for (const backend of opened.splice(0)) await backend.close().catch(() => undefined);
    });
    afterAll(async () => {
      for (const backend of opened) await backend.close().catch(() => undefined);
      await target.cleanup?.();
    });
    const ctx = { make, target };
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
    adminListCases(ctx);
    adminCancelCases(ctx);
    adminBulkCases(ctx);
    adminDeadLetterCases(ctx);
    adminQueueCases(ctx);
    adminProgressCases(ctx);
    adminWorkerCases(ctx);
    schedulesCases(ctx);
    queueMetricsCases(ctx);
    traceContextCases(ctx);
  });
}
