/**
 * The job a piece of code runs for, as an AsyncLocalStorage scope: while someone wants to know
 * (see {@link wantJobScopes}: `soniq worker`'s process guards), each handler (and its argument
 * check) runs inside one, so whatever its promises and timers do later can still be traced to the
 * job — Node restores the scope of a rejected promise for its `unhandledRejection` listeners, which
 * is how `soniq worker` names the job behind a floating rejection.
 *
 * Nobody else reads the scope, so without a reader no scope is entered: on Node 20 the first
 * `AsyncLocalStorage.run` turns on async hooks for the whole process, which then cost every
 * promise of every job (measured: the largest single item of a no-op job's worker CPU,
 * docs/performance.md).
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** What a job scope carries. */
export interface JobScope {
  workerId: string;
  jobId: string;
  jobName: string;
}

let storage: AsyncLocalStorage<JobScope> | undefined;
let readers = 0;

/**
 * Asks for job scopes from now on (until the returned function is called): handlers started
 * meanwhile run inside their job's scope and {@link currentJobScope} can name it.
 * @returns Withdraws the wish (idempotent).
 */
export function wantJobScopes(): () => void {
  readers += 1;
  storage ??= new AsyncLocalStorage<JobScope>();
  let withdrawn = false;
  return () => {
    if (withdrawn) return;
    withdrawn = true;
    readers -= 1;
  };
}

/**
 * Runs `fn` inside the scope of `job` (run by worker `workerId`) when scopes are wanted, else just
 * runs it; returns what it returns.
 */
export function runInJobScope<T>(
  workerId: string,
  job: { id: string; name: string },
  fn: () => T,
): T {
  if (readers === 0 || !storage) return fn();
  return storage.run({ workerId, jobId: job.id, jobName: job.name }, fn);
}

/**
 * The job whose code is running now (or whose code created the promise or timer now being
 * handled), or undefined outside any job or while nobody wants scopes.
 */
export function currentJobScope(): JobScope | undefined {
  return storage?.getStore();
}
