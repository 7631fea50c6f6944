// A thread that takes a sync job after its run has ended — its job_timeout recorded, or the job
// cancelled — does not call the handler (src/worker/thread-runner.ts). Found by the soak: under a
// load average of 13, new threads took about 30 s to load the handler module, a 30 s job timeout
// was recorded meanwhile and the retry ran on another worker, and then the late thread ran the
// handler too: the job's work was done twice.
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { STOP_FLAG } from "../../src/jobs/thread-context.js";
import runThreadTask from "../../src/worker/thread-runner.js";
import type { ThreadTask } from "../../src/worker/thread-task.js";

function task(flag: number): ThreadTask {
  const stopFlag = new SharedArrayBuffer(4);
  Atomics.store(new Int32Array(stopFlag), 0, flag);
  return {
    module: pathToFileURL(new URL("../fixtures/thread-handler.ts", import.meta.url).pathname).href,
    exportName: "default",
    args: { who: "soak" },
    ctx: {
      jobId: "01a2484d-04d6-706f-b1e2-2cdc457fdf7e",
      name: "greet",
      attempt: 1,
      maxAttempts: 3,
      queue: "default",
      workerId: "w",
      createdAt: Date.now(),
      scheduledAt: Date.now(),
      schedule: undefined,
      resume: undefined,
    },
    claimToken: "01a2484d-04d6-706f-b1e2-2cdc457fdf7f",
    stopFlag,
    progress: new SharedArrayBuffer(1024),
  };
}

describe("thread runner: a task taken after its run ended", () => {
  it("is not started after a recorded job_timeout", async () => {
    expect(await runThreadTask(task(STOP_FLAG.job_timeout))).toEqual({
      kind: "not_started",
      reason: "job_timeout",
    });
  });

  it("is not started after a cancel", async () => {
    expect(await runThreadTask(task(STOP_FLAG.cancelled))).toEqual({
      kind: "not_started",
      reason: "cancelled",
    });
  });

  it("runs when nothing stopped it, and when only the shutdown deadline passed (never released once running)", async () => {
    expect(await runThreadTask(task(STOP_FLAG.none))).toEqual({
      kind: "value",
      value: "hello soak from attempt 1",
    });
    expect(await runThreadTask(task(STOP_FLAG.shutdown_timeout))).toEqual({
      kind: "value",
      value: "hello soak from attempt 1",
    });
  });
});
