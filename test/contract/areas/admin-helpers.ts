/**
 * What the operations areas share: a Soniq instance over a contract backend (the admin API and the
 * worker run on it unchanged), and jobs made to a known state through the store.
 */
import { pino } from "pino";
import type { Backend } from "../../../src/backends/contract/index.js";
import { Soniq } from "../../../src/index.js";
import { newJob } from "../helpers.js";

/** A Soniq instance on `backend`: fast polling and heartbeats, silent. */
export function soniqOn(backend: Backend, extra: Record<string, unknown> = {}): Soniq {
  return new Soniq({
    backend,
    logger: pino({ level: "silent" }),
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
    heartbeatTimeout: 1,
    rejectUnknownJobs: false,
    ...extra,
  });
}

/** Enqueues one job through the store; returns its id. */
export async function put(
  b: Backend,
  overrides: Parameters<typeof newJob>[0] = {},
): Promise<string> {
  const job = newJob(overrides);
  await b.jobEnqueue({ jobs: [job] });
  return job.id;
}

/** Claims the one due job of `queue` as `workerId` (registered), returning its claim. */
export async function claimOne(b: Backend, workerId: string, queue = "default") {
  await b.workerRegister({ id: workerId, hostname: "h", pid: 1, queues: null, concurrency: 1 });
  const [job] = await b.jobClaim({ workerId, queues: [queue], limit: 1 });
  if (!job) throw new Error("nothing to claim");
  return job;
}
