/**
 * A queue where flow-control limits hold jobs back (docs/flow-control.md, "Seeing what a limit
 * holds back"), made by a real worker: in queue `tenants`, keyed jobs of tenant `a` (3) and `b`
 * (1) with a concurrency limit of 1 run until released, so `a` runs 1 and holds 2 by concurrency;
 * rate-limited jobs of tenant `r` (3, one start a minute) start one, so 2 are held by rate with
 * the next window about a minute ahead.
 */
import type { Soniq, Worker } from "../../src/index.js";
import { waitFor } from "./wait.js";

/** What {@link seedHeldJobs} made. */
export interface HeldSeed {
  /** The running worker (its keyed handlers wait for {@link release}). */
  worker: Worker;
  /** Lets the keyed handlers finish. */
  release(): void;
}

/** Defines the jobs on `soniq` (before `setup`). */
export function defineFlowJobs(soniq: Soniq): { release(): void } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  soniq.job({
    name: "flow.keyed",
    queue: "tenants",
    concurrency: { key: (args: { tenant: string }) => args.tenant, limit: 1 },
    handler: async () => {
      await gate;
    },
  });
  soniq.job({
    name: "flow.rated",
    queue: "tenants",
    rateLimit: { limit: 1, per: 60, key: (args: { tenant: string }) => args.tenant },
    handler: async () => undefined,
  });
  return { release: open };
}

/**
 * Enqueues the jobs and starts a worker until `a` and `b` run and one `r` job is done.
 * @param release - from {@link defineFlowJobs}.
 */
export async function seedHeldJobs(soniq: Soniq, release: () => void): Promise<HeldSeed> {
  for (const tenant of ["a", "a", "a", "b"]) await soniq.enqueue("flow.keyed", { tenant });
  const rated: string[] = [];
  for (let n = 0; n < 3; n++) rated.push(await soniq.enqueue("flow.rated", { tenant: "r" }));
  const worker = soniq.worker({ concurrency: 6, pollInterval: 0.05 });
  await worker.start();
  await waitFor(
    async () => {
      const [flow] = await soniq.queues.flow({ queue: "tenants" });
      const done = (await Promise.all(rated.map((id) => soniq.getJob(id)))).filter(
        (j) => j?.status === "done",
      ).length;
      const running = (key: string) => flow?.topKeys.find((k) => k.key === key)?.running ?? 0;
      return done === 1 && running("a") === 1 && running("b") === 1;
    },
    30_000,
    "a and b running, one r done",
  );
  return { worker, release };
}
