// The maintenance services on the memory backend: the elector's lease, the maintainer starting
// and stopping its children with the lead, the rescuer's passes, the pruner, the worker reaper,
// and the crash-loop policy's words.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { Backend, ClaimedJob, NewJob } from "../../src/backends/contract/index.js";
import { isSoniqError } from "../../src/errors.js";
import { BaseService, sleep } from "../../src/lifecycle/service.js";
import { Elector, MAINTENANCE_LEASE } from "../../src/maintenance/elector.js";
import { Maintainer } from "../../src/maintenance/maintainer.js";
import { createMaintenance } from "../../src/maintenance/maintenance.js";
import {
  CRASH_LOOP_REASON,
  crashLoopMessage,
  crashLoopRule,
} from "../../src/maintenance/policy.js";
import { Pruner } from "../../src/maintenance/pruner.js";
import { Rescuer } from "../../src/maintenance/rescuer.js";
import { WorkerReaper } from "../../src/maintenance/worker-reaper.js";
import { EventBus } from "../../src/observability/event-bus.js";
import type { SoniqEventMap } from "../../src/observability/events.js";
import { memoryBackend } from "../helpers/test-backends.js";

const logger = pino({ level: "silent" });

/** A memory backend whose "database clock" the test moves by hand (milliseconds). */
async function backendAt(start = Date.UTC(2026, 0, 1)) {
  const time = { now: start };
  return { backend: await memoryBackend({ clock: () => time.now }), time };
}

/** Resolves with the next leadership change `elector` reports. */
function nextChange(elector: Elector): Promise<boolean> {
  return new Promise((resolve) => {
    const off = elector.onChange((leading) => {
      off();
      resolve(leading);
    });
  });
}

const worker = (id: string) => ({ id, hostname: "h", pid: 1, queues: null, concurrency: 1 });
const owner = (job: ClaimedJob) => ({ workerId: job.workerId, claimToken: job.claimToken });
const newJob = (name = "work.it"): NewJob => ({
  id: crypto.randomUUID(),
  name,
  queue: "default",
  args: "{}",
  priority: 0,
  maxAttempts: 3,
  runAt: null,
  delaySeconds: 0,
  dedupKey: null,
});

/** A child service that counts its starts and stops. */
class Child extends BaseService {
  starts = 0;
  stops = 0;
  constructor(name = "child") {
    super({ name, logger });
  }
  protected override onStart(): void {
    this.starts += 1;
  }
  protected async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) await sleep(1_000, signal);
  }
  protected override onStopped(): void {
    this.stops += 1;
  }
}

describe("Elector", () => {
  it("elector › lease free › gains it, reports it, and a second holder stays follower", async () => {
    const { backend } = await backendAt();
    const a = new Elector({ backend, holder: "a", logger, intervalMs: 10 });
    const b = new Elector({ backend, holder: "b", logger, intervalMs: 10 });
    const gained = nextChange(a);
    await a.start();
    expect(await gained).toBe(true);
    expect(a.isLeader()).toBe(true);
    await b.start();
    await sleep(50); // several of b's attempts
    expect(b.isLeader()).toBe(false);
    await a.stop();
    await b.stop();
  });

  it("elector › stopped while leading › reports the loss and gives the lease up", async () => {
    const { backend } = await backendAt();
    const a = new Elector({ backend, holder: "a", logger, intervalMs: 10 });
    const gained = nextChange(a);
    await a.start();
    await gained;
    const lost = nextChange(a);
    await a.stop();
    expect(await lost).toBe(false);
    expect(a.isLeader()).toBe(false);
    // Given up, not left to expire: another holder takes it at once.
    expect(
      await backend.leaseTryTake({ name: MAINTENANCE_LEASE, holder: "b", ttlSeconds: 10 }),
    ).toBe(true);
  });

  it("elector › lease taken over after expiry › reports the loss at its next attempt", async () => {
    const { backend, time } = await backendAt();
    const a = new Elector({ backend, holder: "a", logger, intervalMs: 10, ttlSeconds: 1 });
    const gained = nextChange(a);
    await a.start();
    await gained;
    const lost = nextChange(a);
    time.now += 2_000; // a's lease expired (a paused process, say) and b took it
    expect(
      await backend.leaseTryTake({ name: MAINTENANCE_LEASE, holder: "b", ttlSeconds: 60 }),
    ).toBe(true);
    expect(await lost).toBe(false);
    await a.stop();
  });

  it("elector › renewals fail past its lease › steps down; before that › still leads", async () => {
    let failing = false;
    const local = { now: 0 };
    const backend: Pick<Backend, "leaseTryTake" | "leaseResign"> = {
      leaseTryTake: async () => {
        if (failing) throw new Error("database unreachable");
        return true;
      },
      leaseResign: async () => {},
    };
    const a = new Elector({
      backend,
      holder: "a",
      logger,
      intervalMs: 10,
      ttlSeconds: 1,
      clock: () => local.now,
    });
    const gained = nextChange(a);
    await a.start();
    await gained;
    failing = true;
    await sleep(50); // failed renewals within the lease
    expect(a.isLeader()).toBe(true);
    const lost = nextChange(a);
    local.now += 1_000; // the lease it last held has run out
    expect(await lost).toBe(false);
    await a.stop();
  });
});

describe("Maintainer", () => {
  it("maintainer › lease gained then lost › starts the children, then stops them", async () => {
    const { backend, time } = await backendAt();
    const elector = new Elector({ backend, holder: "a", logger, intervalMs: 10, ttlSeconds: 1 });
    const children = [new Child("one"), new Child("two")];
    const m = new Maintainer({ logger, elector, services: children });
    const gained = nextChange(elector);
    await m.start();
    await gained;
    await expectEventually(() => children.every((c) => c.state === "running"));
    expect(m.isLeader()).toBe(true);
    const lost = nextChange(elector);
    time.now += 2_000;
    await backend.leaseTryTake({ name: MAINTENANCE_LEASE, holder: "b", ttlSeconds: 60 });
    await lost;
    await expectEventually(() => children.every((c) => c.state === "idle"));
    expect(children.map((c) => [c.starts, c.stops])).toEqual([
      [1, 1],
      [1, 1],
    ]);
    await m.stop();
  });

  it("maintainer › stopped while leading › stops the children, then gives the lease up", async () => {
    const { backend } = await backendAt();
    const elector = new Elector({ backend, holder: "a", logger, intervalMs: 10 });
    const child = new Child();
    let leaseFreeWhenChildStopped: boolean | undefined;
    const originalStop = child.stop.bind(child);
    child.stop = async (boundMs?: number) => {
      await originalStop(boundMs);
      // Still ours while the child stops: nobody else may lead yet.
      leaseFreeWhenChildStopped = await backend.leaseTryTake({
        name: MAINTENANCE_LEASE,
        holder: "b",
        ttlSeconds: 60,
      });
    };
    const m = new Maintainer({ logger, elector, services: [child] });
    const gained = nextChange(elector);
    await m.start();
    await gained;
    await expectEventually(() => child.state === "running");
    await m.stop();
    expect(child.state).toBe("idle");
    expect(elector.state).toBe("idle");
    expect(leaseFreeWhenChildStopped).toBe(false);
    expect(
      await backend.leaseTryTake({ name: MAINTENANCE_LEASE, holder: "b", ttlSeconds: 60 }),
    ).toBe(true);
  });

  it("maintainer › never leads › never starts its children", async () => {
    const { backend } = await backendAt();
    await backend.leaseTryTake({ name: MAINTENANCE_LEASE, holder: "someone-else", ttlSeconds: 60 });
    const elector = new Elector({ backend, holder: "a", logger, intervalMs: 10 });
    const child = new Child();
    const m = new Maintainer({ logger, elector, services: [child] });
    await m.start();
    await sleep(50);
    await m.stop();
    expect(child.starts).toBe(0);
  });
});

describe("Rescuer", () => {
  it("rescuer › runOnce › requeues a stopped worker's rows and emits job_recovered", async () => {
    const { backend } = await backendAt();
    const events: Array<[string, Record<string, unknown>]> = [];
    const bus = new EventBus<SoniqEventMap>(logger);
    bus.onAny((n, p) => void events.push([n, p as Record<string, unknown>]));
    await backend.workerRegister(worker("dead"));
    const job = newJob();
    await backend.jobEnqueue({ jobs: [job] });
    await backend.jobClaim({ workerId: "dead", queues: null, limit: 1 });
    await backend.workerMarkStopped({ workerId: "dead" });
    const rescuer = new Rescuer({
      backend,
      logger,
      events: bus,
      heartbeatTimeoutSeconds: 30,
      maxInterruptions: 3,
    });
    const result = await rescuer.runOnce({ staleMeansDead: false });
    expect(result.requeued).toMatchObject([
      { id: job.id, previousOwner: "dead", interruptions: 1 },
    ]);
    expect(await backend.jobGet({ id: job.id })).toMatchObject({
      status: "queued",
      workerId: null,
    });
    expect(events).toEqual([
      [
        "job_recovered",
        {
          job_id: job.id,
          job_name: "work.it",
          queue: "default",
          previous_owner: "dead",
          interruptions: 1,
          charged: true,
        },
      ],
    ]);
  });

  it("rescuer › stale but not stopped owner › only a pass that vouches for staleness requeues", async () => {
    const { backend, time } = await backendAt();
    await backend.workerRegister(worker("silent"));
    const job = newJob();
    await backend.jobEnqueue({ jobs: [job] });
    await backend.jobClaim({ workerId: "silent", queues: null, limit: 1 });
    time.now += 60_000; // its heartbeat is a minute old
    const rescuer = new Rescuer({
      backend,
      logger,
      heartbeatTimeoutSeconds: 30,
      maxInterruptions: 3,
    });
    expect((await rescuer.runOnce({ staleMeansDead: false })).requeued).toEqual([]);
    expect((await rescuer.runOnce()).requeued).toHaveLength(1);
  });

  it("rescuer › periodic pass › treats staleness as death only once this worker has been healthy for heartbeatTimeout", async () => {
    const { backend, time } = await backendAt();
    await backend.workerRegister(worker("silent"));
    const job = newJob();
    await backend.jobEnqueue({ jobs: [job] });
    await backend.jobClaim({ workerId: "silent", queues: null, limit: 1 });
    time.now += 60_000;
    let healthy = 0;
    const rescuer = new Rescuer({
      backend,
      logger,
      heartbeatTimeoutSeconds: 30,
      maxInterruptions: 3,
      intervalMs: 10,
      healthyForSeconds: () => healthy,
    });
    await rescuer.start();
    await rescuer.runNow();
    expect(await backend.jobGet({ id: job.id })).toMatchObject({ status: "processing" });
    healthy = 30;
    await expectEventually(async () => (await backend.jobGet({ id: job.id }))?.status === "queued");
    await rescuer.stop();
  });

  it("rescuer › periodic pass › a call stuck on a lock while this worker's heartbeats broke › the pass's next call does not treat staleness as death", async () => {
    // The leader's tick vouched for the database, then its first call (submissionRecover) waited
    // on a lock on the jobs table; meanwhile every heartbeat (this worker's too) waited on it as
    // well. After the release, the live worker's heartbeat is stale: the rest of the pass must not
    // requeue its job (breaker: a LOCK TABLE soniq_jobs of 15 s requeued a live worker's job).
    const { backend, time } = await backendAt();
    await backend.workerRegister(worker("live"));
    const job = newJob();
    await backend.jobEnqueue({ jobs: [job] });
    await backend.jobClaim({ workerId: "live", queues: null, limit: 1 });
    let healthy = 60;
    let stuck = false;
    let release: () => void = () => undefined;
    const lock = new Promise<void>((resolve) => {
      release = resolve;
    });
    const submissions = Object.assign(Object.create(backend.submissions) as object, {
      submissionRecover: async (p: Parameters<typeof backend.submissions.submissionRecover>[0]) => {
        stuck = true;
        await lock;
        return backend.submissions.submissionRecover(p);
      },
    }) as typeof backend.submissions;
    const rescuer = new Rescuer({
      backend: { jobRecoverStale: (p) => backend.jobRecoverStale(p), submissions },
      logger,
      heartbeatTimeoutSeconds: 30,
      maxInterruptions: 3,
      intervalMs: 60_000,
      healthyForSeconds: () => healthy,
    });
    await rescuer.start();
    await expectEventually(async () => stuck);
    time.now += 60_000; // the lock held a minute: every heartbeat is stale
    healthy = 0; // this worker's heartbeat failed meanwhile
    release();
    await rescuer.stop();
    expect(await backend.jobGet({ id: job.id })).toMatchObject({
      status: "processing",
      workerId: "live",
    });
  });

  it("rescuer › a worker's own rescuer, its own heartbeat stale (starved event loop) › never requeues or freezes its own rows; another stale worker's are recovered", async () => {
    const { backend, time } = await backendAt();
    await backend.workerRegister(worker("self"));
    await backend.workerRegister(worker("other"));
    const mine = newJob();
    const submitting = newJob("remote.gen");
    const theirs = newJob();
    await backend.jobEnqueue({ jobs: [mine] });
    await backend.jobClaim({ workerId: "self", queues: null, limit: 1 });
    await backend.jobEnqueue({ jobs: [submitting] });
    const [sub] = await backend.jobClaim({ workerId: "self", queues: null, limit: 1 });
    await backend.submissions.submissionMarkSubmitting({
      jobId: sub!.id,
      owner: owner(sub!),
      name: "remote.gen",
      queue: "default",
    });
    await backend.jobEnqueue({ jobs: [theirs] });
    await backend.jobClaim({ workerId: "other", queues: null, limit: 1 });
    time.now += 60_000; // both heartbeats a minute old: self's loop was starved, other is dead
    const { rescuer } = createMaintenance({
      backend,
      workerId: "self",
      settings: { heartbeatInterval: 1, heartbeatTimeout: 30, maxInterruptions: 3 },
      logger,
      healthyForSeconds: () => 60,
    });
    const result = await rescuer.runOnce();
    expect(result.requeued.map((j) => j.id)).toEqual([theirs.id]);
    expect(await backend.jobGet({ id: mine.id })).toMatchObject({
      status: "processing",
      workerId: "self",
    });
    expect(await backend.submissions.submissionGet({ jobId: submitting.id })).toMatchObject({
      phase: "submitting",
      workerId: "self",
    });
    // `soniq recover`'s rescuer has no worker of its own: it recovers them.
    const cli = new Rescuer({ backend, logger, heartbeatTimeoutSeconds: 30, maxInterruptions: 3 });
    expect((await cli.runOnce()).requeued.map((j) => j.id)).toEqual([mine.id]);
    expect(await backend.submissions.submissionGet({ jobId: submitting.id })).toMatchObject({
      phase: "frozen",
      frozenReason: "crash",
    });
  });

  it("rescuer › past maxInterruptions › dead-letters with the policy's reason and words", async () => {
    const { backend } = await backendAt();
    const events: string[] = [];
    const bus = new EventBus<SoniqEventMap>(logger);
    bus.onAny((n, _p) => void events.push(n));
    const job = newJob();
    await backend.jobEnqueue({ jobs: [job] });
    const rescuer = new Rescuer({
      backend,
      logger,
      events: bus,
      heartbeatTimeoutSeconds: 30,
      maxInterruptions: 1,
    });
    for (const gone of ["gone-1", "gone-2"]) {
      await backend.jobClaim({ workerId: gone, queues: null, limit: 1 });
      await rescuer.runOnce({ staleMeansDead: false }); // unknown owners
    }
    expect(await backend.deadLetterGet({ id: job.id })).toMatchObject({
      reason: CRASH_LOOP_REASON,
      lastError: crashLoopMessage(2),
      interruptions: 2,
      attempts: 0,
    });
    expect(events).toEqual(["job_recovered", "job_dead_lettered"]);
  });
});

describe("Pruner", () => {
  it("pruner › expired finished rows beyond one batch › deletes them all, batch by batch, and keeps the rest", async () => {
    const { backend, time } = await backendAt();
    const jobs = Array.from({ length: 5 }, () => newJob());
    const kept = newJob();
    await backend.jobEnqueue({ jobs: [...jobs, kept] });
    for (const c of await backend.jobClaim({ workerId: "w", queues: null, limit: 6 })) {
      await backend.jobComplete({
        id: c.id,
        owner: owner(c),
        result: null,
        resultRetentionSeconds: c.id === kept.id ? 3600 : 10,
      });
    }
    time.now += 11_000;
    const limits: Array<number | undefined> = [];
    const jobPruneFinished = (params: { limit?: number }) => {
      limits.push(params.limit);
      return backend.jobPruneFinished(params);
    };
    const pruner = new Pruner({ backend: { jobPruneFinished }, logger, batchLimit: 2 });
    await pruner.start();
    await pruner.runNow(); // joins the first tick, run at once
    await pruner.stop();
    expect(limits).toEqual([2, 2, 2]); // 2 + 2 + 1: the short batch ends the tick
    for (const j of jobs) expect(await backend.jobGet({ id: j.id })).toBeNull();
    expect(await backend.jobGet({ id: kept.id })).toMatchObject({ status: "done" });
  });
});

describe("Pruner › remote submissions", () => {
  it("pruner › submission rows of jobs gone › pruned after the jobs in the same tick, in batches of batchLimit", async () => {
    const calls: string[] = [];
    let jobsLeft = 3;
    let subsLeft = 5;
    const batch = (left: number, limit: number) => Math.min(left, limit);
    const pruner = new Pruner({
      backend: {
        jobPruneFinished: async ({ limit = 2 }) => {
          calls.push("jobs");
          const n = batch(jobsLeft, limit);
          jobsLeft -= n;
          return n;
        },
        submissions: {
          submissionPrune: async ({ limit }) => {
            calls.push(`subs:${limit}`);
            const n = batch(subsLeft, limit);
            subsLeft -= n;
            return n;
          },
        },
      },
      logger,
      batchLimit: 2,
    });
    await pruner.start();
    await pruner.runNow();
    await pruner.stop();
    expect(calls).toEqual(["jobs", "jobs", "subs:2", "subs:2", "subs:2"]); // 2+1 jobs, then 2+2+1
    expect(subsLeft).toBe(0);
  });
});

describe("WorkerReaper", () => {
  it("reaper › worker rows not seen for an hour › forgotten; recent ones kept", async () => {
    const { backend, time } = await backendAt();
    await backend.workerRegister(worker("vanished"));
    time.now += 3_601_000;
    await backend.workerRegister(worker("alive"));
    const reaper = new WorkerReaper({ backend, logger });
    await reaper.start();
    await reaper.runNow();
    await reaper.stop();
    expect((await backend.workerList({ heartbeatTimeoutSeconds: 30 })).map((w) => w.id)).toEqual([
      "alive",
    ]);
  });
});

describe("crash-loop policy", () => {
  it("policy › message › is the text stored before the policy moved here", () => {
    expect(crashLoopMessage(4)).toBe(
      "crash_loop: interrupted 4 times (its worker stopped heartbeating each time)",
    );
    expect(crashLoopRule(3)).toMatchObject({ maxInterruptions: 3, reason: "crash_loop" });
  });

  it("policy › negative or fractional maxInterruptions › INVALID_OPTION", () => {
    for (const bad of [-1, 1.5]) {
      let caught: unknown;
      try {
        crashLoopRule(bad);
      } catch (err) {
        caught = err;
      }
      expect(isSoniqError(caught, "INVALID_OPTION")).toBe(true);
    }
  });
});

/** Waits until `check` holds (generous 5 s bound; polls every 5 ms). */
async function expectEventually(check: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not reached within 5 s");
    await sleep(5);
  }
}
