/** The README's sync-handler example (digest.ts) through a drain: the job is given back, no attempt spent. */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { type MetricsSink, Soniq } from "../../src/index.js";
import { linkedApp } from "../helpers/linked-app.js";
import { readmeFiles } from "../helpers/readme.js";
import { memoryBackend } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

describe("README sync-handler example", () => {
  it("digest.ts › the shutdown deadline passes mid-job › it returns snooze(0): queued again, attempts 0, no error", async () => {
    const digest = readmeFiles()["digest.ts"];
    expect(digest).toContain("return snooze(0)");
    const dir = linkedApp({ "digest.ts": digest as string });
    const events: string[] = [];
    const metrics: MetricsSink = { emit: (name) => void events.push(name) };
    const soniq = new Soniq({
      backend: await memoryBackend(),
      logger: pino({ level: "silent" }),
      metrics,
      env: {},
      pollInterval: 0.05,
    });
    const fileDigest = soniq.syncJob<{ path: string }>({
      name: "file.digest",
      handlerModule: `${dir}/digest.ts`,
      maxAttempts: 1,
    });
    // /dev/zero never ends: only the stop request ends this run.
    const id = await fileDigest.enqueue({ path: "/dev/zero" });
    const worker = soniq.worker({ shutdownTimeout: 0.3 });
    await worker.start();
    await waitFor(async () => (await soniq.stats()).processing === 1, 10_000, "claimed");
    const exit = await worker.stop();
    expect(exit.exitCode).toBe(1); // the deadline path: the thread was asked to stop
    expect(events).toContain("job_snoozed");
    expect(await soniq.getJob(id)).toMatchObject({
      status: "queued",
      attempts: 0,
      lastError: null,
      workerId: null,
    });
    await soniq.close();
  });
});
