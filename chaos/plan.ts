/**
 * What a chaos run does, decided up front from one seed: the jobs (how long each handler sleeps,
 * which ones fail their first attempt on purpose) and the fault schedule (when each SIGKILL,
 * SIGTERM, SIGSTOP/SIGCONT and the PostgreSQL restart happens). The same seed gives the same plan;
 * the timing of real processes around it still varies from run to run.
 */

/** A small, fast, seedable PRNG (mulberry32): uniform in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Arguments of the `chaos.work` job. */
export interface WorkArgs {
  /** Logical job number, 0-based (also its dedup key `chaos-<n>`). */
  n: number;
  /** How long the handler sleeps, in milliseconds. */
  ms: number;
  /** When true the handler throws on its first attempt (exercises retry accounting). */
  flaky: boolean;
  /**
   * A poison job: its handler SIGKILLs its own worker every time it runs. It must reach the
   * dead-letter queue as `crash_loop` within `maxInterruptions + 2` crashes, charging no other job.
   */
  poison?: boolean;
  /** Its handler leaves a rejected promise unhandled (a careless line); the worker must go on. */
  floating?: boolean;
  /**
   * A walker (docs/checkpoints.md): it processes `items` items of `itemMs` each, recording each one
   * in the run log, and checkpoints `{ next }` every `every` items, resuming from `ctx.resume`.
   */
  walk?: { items: number; every: number; itemMs: number };
  /**
   * A stepped job: steps `prepare`, `charge` (an effect step whose effect is recorded, then takes
   * `effectMs` more) and `finish`. With `reconcile`, the charge's `reconcile` looks the effect up;
   * without, an unknown outcome freezes the job for the harness's operator step.
   */
  steps?: { effectMs: number; reconcile: boolean };
  /**
   * A flow-limited job (docs/flow-control.md): enqueued as `chaos.limited`, whose key is `key`
   * with a concurrency limit of {@link LIMITED_CONCURRENCY} and a rate limit of
   * {@link LIMITED_RATE} starts per {@link LIMITED_RATE_PER} seconds; otherwise like the rest.
   */
  flow?: { key: string };
}

/** The name of the flow-limited chaos job. */
export const LIMITED_JOB = "chaos.limited";
/** Most `chaos.limited` jobs of one key running at once. */
export const LIMITED_CONCURRENCY = 2;
/** Most `chaos.limited` starts of one key per {@link LIMITED_RATE_PER} seconds. */
export const LIMITED_RATE = 8;
/** The rate window of `chaos.limited`, in seconds. */
export const LIMITED_RATE_PER = 1;

/**
 * The flow-control options of `chaos.limited`, for its definition in the workers (chaos/jobs.ts)
 * and in the producer: the key and limits are computed at enqueue from the definition, so the
 * producer must define the job too (an enqueue by name without it stores no key: unlimited).
 */
export const LIMITED_FLOW = {
  concurrency: { key: (args: WorkArgs) => args.flow?.key ?? "none", limit: LIMITED_CONCURRENCY },
  rateLimit: { limit: LIMITED_RATE, per: LIMITED_RATE_PER },
};

/** Whether job n is flow-limited (one in 10), over 3 keys. */
export function isLimited(n: number): boolean {
  return n % 10 === 5;
}

/** Whether job n walks items with checkpoints (one in 40). */
export function isWalker(n: number): boolean {
  return n % 40 === 11;
}

/** Whether job n runs durable steps with an effect (one in 20; half of them with `reconcile`). */
export function isStepped(n: number): boolean {
  return n % 20 === 9;
}

/** Whether job n is a poison job (one in every 1000, from n = 37). */
export function isPoison(n: number): boolean {
  return n % 1000 === 37;
}

/** Job n of a run seeded with `seed`: mostly short, some long enough for a kill to land mid-job. */
export function jobSpec(seed: number, n: number): WorkArgs {
  const rnd = prng((seed ^ Math.imul(n + 1, 0x9e3779b1)) >>> 0);
  const r = rnd();
  let ms: number;
  if (r < 0.5)
    ms = 5 + Math.floor(rnd() * 45); // 50 %: 5–50 ms
  else if (r < 0.9)
    ms = 50 + Math.floor(rnd() * 450); // 40 %: 50–500 ms
  else if (r < 0.99)
    ms = 500 + Math.floor(rnd() * 1000); // 9 %: 0.5–1.5 s
  else ms = 4000; // 1 %: longer than the chaos shutdownTimeout (3 s): NACK'd by a SIGTERM
  const flaky = rnd() < 0.05;
  if (isPoison(n)) return { n, ms: 0, flaky: false, poison: true };
  if (isWalker(n)) return { n, ms: 0, flaky, walk: { items: 80, every: 10, itemMs: 15 } };
  // The effect takes 1.2 s after it is recorded, so that kills land mid-effect (frozen jobs).
  if (isStepped(n)) return { n, ms: 0, flaky, steps: { effectMs: 1200, reconcile: n % 40 === 9 } };
  if (isLimited(n)) return { n, ms, flaky, flow: { key: `tenant-${Math.floor(n / 10) % 3}` } };
  // One in a hundred leaves a floating rejection behind, then works as usual.
  return n % 100 === 13 ? { n, ms, flaky, floating: true } : { n, ms, flaky };
}

export type FaultKind = "sigkill" | "sigterm" | "sigstop_long" | "sigstop_short" | "pg_restart";

/** One planned fault: `at` seconds into the chaos phase; `pause` seconds for SIGSTOP. */
export interface PlannedFault {
  at: number;
  kind: FaultKind;
  pause?: number;
  /** A uniform number used to pick the target worker when the fault fires. */
  pick: number;
}

/** Settings the plan depends on. */
export interface PlanOptions {
  seed: number;
  /** Length of the chaos phase in seconds. */
  duration: number;
  /** Whether one PostgreSQL restart belongs in the plan. */
  pgRestart: boolean;
  /** Heartbeat timeout of the workers (seconds): long pauses exceed it, short ones stay well under. */
  heartbeatTimeout: number;
  heartbeatInterval: number;
  /** Mean seconds between the random faults added to the mandatory ones. */
  meanGap: number;
}

/**
 * The fault schedule: a mandatory set spread over the phase (two SIGKILLs, one SIGSTOP beyond
 * the stale window, one SIGTERM, one short SIGSTOP, and the PostgreSQL restart when asked), plus
 * random faults with exponential gaps. Nothing is planned in the first 2 s (workers starting) or
 * the last 1.5 s of the phase.
 */
export function faultPlan(options: PlanOptions): PlannedFault[] {
  const rnd = prng(options.seed ^ 0x5eed);
  const { duration } = options;
  const longPause = () => options.heartbeatTimeout + 1 + rnd() * 2; // 1–3 s beyond the timeout
  // Short pauses end well inside the window in which the worker is still live.
  const shortMax = Math.max(
    0.2,
    Math.min(1.5, options.heartbeatTimeout - options.heartbeatInterval - 1),
  );
  const shortPause = () => 0.2 + rnd() * (shortMax - 0.2);
  const jitter = (f: number) => duration * (f + (rnd() - 0.5) * 0.06);
  const plan: PlannedFault[] = [
    { at: jitter(0.15), kind: "sigkill", pick: rnd() },
    { at: jitter(0.28), kind: "sigstop_long", pause: longPause(), pick: rnd() },
    { at: jitter(0.42), kind: "sigterm", pick: rnd() },
    { at: jitter(0.68), kind: "sigstop_short", pause: shortPause(), pick: rnd() },
    { at: jitter(0.8), kind: "sigkill", pick: rnd() },
  ];
  if (options.pgRestart) plan.push({ at: jitter(0.55), kind: "pg_restart", pick: 0 });
  let t = 2;
  for (;;) {
    t += -Math.log(1 - rnd()) * options.meanGap;
    if (t > duration - 1.5) break;
    const r = rnd();
    if (r < 0.35) plan.push({ at: t, kind: "sigkill", pick: rnd() });
    else if (r < 0.6) plan.push({ at: t, kind: "sigterm", pick: rnd() });
    else if (r < 0.75) plan.push({ at: t, kind: "sigstop_long", pause: longPause(), pick: rnd() });
    else plan.push({ at: t, kind: "sigstop_short", pause: shortPause(), pick: rnd() });
  }
  for (const f of plan) f.at = Math.min(Math.max(f.at, 2), duration - 1.5);
  return plan.sort((a, b) => a.at - b.at);
}
