// The heartbeat on the memory backend: beats report the status, healthySince starts, and rows
// owned but not tracked after a lost claim answer are released.
import { describe, expect, it } from "vitest";
import { Heartbeat } from "../../src/worker/heartbeat.js";
import { waitFor } from "../helpers/wait.js";
import { silent, workerParts } from "../helpers/worker-parts.js";

describe("Heartbeat", () => {
  it("beat › worker draining › row reports draining and the worker counts as healthy", async () => {
    const { backend } = await workerParts((s) => {
      s.job({ name: "hb.job", handler: async () => 1 });
    });
    let status: "running" | "draining" = "running";
    const heartbeat = new Heartbeat({
      backend,
      workerId: "w1",
      intervalSeconds: 0.02,
      logger: silent,
      report: () => ({
        status,
        shutdownState: status === "running" ? "RUNNING" : "DRAINING",
        drainElapsedSeconds: null,
        deadlineInSeconds: null,
      }),
      progress: () => ({ reports: [], written: () => undefined }),
      onCancelRequested: () => undefined,
      isTracked: () => false,
      orphans: { claimInFlight: false, takeOrphanSuspicion: () => false },
      now: Date.now,
    });
    expect(heartbeat.healthySince).toBeUndefined();
    await heartbeat.start();
    status = "draining";
    await heartbeat.runNow();
    expect(heartbeat.healthySince).toBeTypeOf("number");
    const [row] = await backend.workerList({ heartbeatTimeoutSeconds: 60 });
    expect(row).toMatchObject({ status: "draining" });
    await heartbeat.stop();
    expect(heartbeat.state).toBe("idle");
  });

  it("healthySeconds › no beat has answered for more than two intervals (a beat stuck on a lock) › 0, before the stuck beat ends", async () => {
    // The rescuer asks it before each call of its pass (docs/reliability.md): a heartbeat waiting
    // behind a lock on the jobs table for longer than heartbeatTimeout but less than the 10 s
    // bound of a database call has not failed yet, and must not count as a healthy run.
    const { backend } = await workerParts((s) => {
      s.job({ name: "hb.job", handler: async () => 1 });
    });
    const time = { now: Date.UTC(2026, 0, 1) };
    const heartbeat = new Heartbeat({
      backend,
      workerId: "w1",
      intervalSeconds: 1,
      logger: silent,
      report: () => ({
        status: "running",
        shutdownState: "RUNNING",
        drainElapsedSeconds: null,
        deadlineInSeconds: null,
      }),
      progress: () => ({ reports: [], written: () => undefined }),
      onCancelRequested: () => undefined,
      isTracked: () => false,
      orphans: { claimInFlight: false, takeOrphanSuspicion: () => false },
      now: () => time.now,
    });
    await heartbeat.start();
    await heartbeat.runNow();
    time.now += 2_500; // within two intervals and a second of the last answer
    expect(heartbeat.healthySeconds()).toBe(2.5);
    time.now += 1_000; // past them: the next beats are overdue
    expect(heartbeat.healthySeconds()).toBe(0);
    await heartbeat.stop();
  });

  it("beat › a claim failed and rows are owned but untracked › those rows are released", async () => {
    const { backend, soniq, claim } = await workerParts((s) => {
      s.job({ name: "hb.job", handler: async () => 1 });
    });
    const orphan = await soniq.enqueue("hb.job", {});
    const kept = await soniq.enqueue("hb.job", {});
    await claim();
    let suspect = true;
    const heartbeat = new Heartbeat({
      backend,
      workerId: "w1",
      intervalSeconds: 0.02,
      logger: silent,
      report: () => ({
        status: "running",
        shutdownState: "RUNNING",
        drainElapsedSeconds: null,
        deadlineInSeconds: null,
      }),
      progress: () => ({ reports: [], written: () => undefined }),
      onCancelRequested: () => undefined,
      isTracked: (id) => id === kept,
      orphans: {
        claimInFlight: false,
        takeOrphanSuspicion: () => {
          const was = suspect;
          suspect = false;
          return was;
        },
      },
      now: Date.now,
    });
    await heartbeat.start();
    await waitFor(async () => (await backend.jobGet({ id: orphan }))?.status === "queued");
    expect(await backend.jobGet({ id: kept })).toMatchObject({ status: "processing" });
    await heartbeat.stop();
  });

  it("beat › a claim was in flight when the release looked at an untracked row › the suspicion is kept and the row released at a later beat", async () => {
    const { backend, soniq, claim } = await workerParts((s) => {
      s.job({ name: "hb.job", handler: async () => 1 });
    });
    const orphan = await soniq.enqueue("hb.job", {});
    await claim();
    let suspect = true;
    let retained = false;
    // In flight for the first look at the owned rows only (a poll's claim started meanwhile).
    let inFlightLooks = 1;
    const heartbeat = new Heartbeat({
      backend,
      workerId: "w1",
      intervalSeconds: 0.02,
      logger: silent,
      report: () => ({
        status: "running",
        shutdownState: "RUNNING",
        drainElapsedSeconds: null,
        deadlineInSeconds: null,
      }),
      progress: () => ({ reports: [], written: () => undefined }),
      onCancelRequested: () => undefined,
      isTracked: () => false,
      orphans: {
        get claimInFlight() {
          if (inFlightLooks === 0) return false;
          inFlightLooks -= 1;
          return true;
        },
        takeOrphanSuspicion: () => {
          const was = suspect || retained;
          suspect = false;
          retained = false;
          return was;
        },
        retainOrphanSuspicion: () => {
          retained = true;
        },
      },
      now: Date.now,
    });
    await heartbeat.start();
    await waitFor(async () => (await backend.jobGet({ id: orphan }))?.status === "queued");
    expect(inFlightLooks).toBe(0);
    await heartbeat.stop();
  });
});
