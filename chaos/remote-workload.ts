/**
 * The remote jobs of a chaos run (docs/remote-jobs.md), decided up front from the run's seed like
 * the rest of the plan: which provider behaviour each one meets (how long the POST takes to answer
 * — long enough, often, for a kill or a SIGTERM to land while it is in flight —, how many polls
 * answer `processing`, whether the provider accepts and then drops the answer, whether the task
 * fails) and which job kind it is: `chaos.remote` defines `reconcile`; one in ten is
 * `chaos.remote_manual`, which does not, so its frozen jobs wait for the operator step the harness
 * performs at the end (chaos/remote-phase.ts).
 */
import { prng } from "./plan.js";

/** The job with `reconcile`. */
export const REMOTE_JOB = "chaos.remote";
/** The job without `reconcile`: frozen ones wait for an operator. */
export const REMOTE_MANUAL_JOB = "chaos.remote_manual";
/** SQL `LIKE` pattern of both names (the harness keeps them out of the plain jobs' checks). */
export const REMOTE_NAME_LIKE = "chaos.remote%";

/** The test provider's behaviour for one request (test/helpers/remote-provider.ts). */
export interface RemoteBehaviour {
  delayMs: number;
  polls: number;
  outcome: "succeeded" | "failed";
  drop: boolean;
}

/** Arguments of a chaos remote job. */
export interface RemoteArgs {
  /** Logical number, 0-based (dedup key `chaos-remote-<n>`). */
  n: number;
  behaviour: RemoteBehaviour;
}

/** Remote job n of a run seeded with `seed`: its name and arguments. */
export function remoteSpec(seed: number, n: number): { name: string; args: RemoteArgs } {
  const rnd = prng((seed ^ 0x2e3073 ^ Math.imul(n + 1, 0x85ebca6b)) >>> 0);
  const r = rnd();
  // 50 %: a quick answer; 50 %: 0.2–1.5 s, so faults often land while the POST is in flight.
  const delayMs = r < 0.5 ? Math.floor(rnd() * 100) : 200 + Math.floor(rnd() * 1300);
  const behaviour: RemoteBehaviour = {
    delayMs,
    polls: Math.floor(rnd() * 4),
    outcome: rnd() < 0.03 ? "failed" : "succeeded",
    drop: rnd() < 0.05,
  };
  return { name: n % 10 === 3 ? REMOTE_MANUAL_JOB : REMOTE_JOB, args: { n, behaviour } };
}

/** How many remote jobs a run of `jobs` plain jobs adds: a tenth, at least 20. */
export function remoteCount(jobs: number): number {
  return Math.max(20, Math.round(jobs / 10));
}
