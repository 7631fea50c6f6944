/**
 * The job a piece of code runs for, as an AsyncLocalStorage scope: each handler (and its argument
 * check) runs inside one, so whatever its promises and timers do later can still be traced to the
 * job — Node restores the scope of a rejected promise for its `unhandledRejection` listeners, which
 * is how `soniq worker` names the job behind a floating rejection.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** What a job scope carries. */
export interface JobScope {
  workerId: string;
  jobId: string;
  jobName: string;
}

const storage = new AsyncLocalStorage<JobScope>();

/** Runs `fn` inside the scope of `scope`'s job and returns what it returns. */
export function runInJobScope<T>(scope: JobScope, fn: () => T): T {
  return storage.run(scope, fn);
}

/**
 * The job whose code is running now (or whose code created the promise or timer now being
 * handled), or undefined outside any job.
 */
export function currentJobScope(): JobScope | undefined {
  return storage.getStore();
}
