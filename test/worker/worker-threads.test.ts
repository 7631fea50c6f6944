// WorkerThreads' record of running threads, which FORCE_TIMEOUT_PATH and WAIT_FOR_THREAD read.
import { describe, expect, it } from "vitest";
import { WorkerThreads } from "../../src/worker/worker-threads.js";

describe("WorkerThreads", () => {
  it("threadEnded › a second thread of the same job still runs › the job still counts as running", () => {
    let ended = 0;
    const threads = new WorkerThreads("w1", 2, () => {
      ended += 1;
    });
    // A job timed out on its first thread (which runs on) and was claimed again onto a second.
    const first = Promise.resolve();
    const second = Promise.resolve();
    threads.threadStarted("job-a", first);
    threads.threadStarted("job-a", second);
    expect(threads.runningJobIds()).toEqual(["job-a"]);
    threads.threadEnded(first);
    expect(ended).toBe(1);
    expect(threads.isRunning("job-a")).toBe(true);
    expect(threads.runningJobIds()).toEqual(["job-a"]);
    threads.threadEnded(second);
    expect(threads.isRunning("job-a")).toBe(false);
    expect(threads.runningJobIds()).toEqual([]);
  });
});
