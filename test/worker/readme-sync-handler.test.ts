/**
 * The README's long-job example (digest.ts, a sync handler that checkpoints, then returns
 * snooze(0) on a stop) through two deploys: each drain gives the job back with no attempt spent,
 * each next worker resumes from the last checkpoint, and the third run finishes with the checksum
 * of the whole file.
 */
import { closeSync, ftruncateSync, openSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { type MetricsSink, Soniq } from "../../src/index.js";
import { linkedApp } from "../helpers/linked-app.js";
import { readmeFiles } from "../helpers/readme.js";
import { tempDir } from "../helpers/temp.js";
import { memoryBackend } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

/** Bytes of the sparse (all-zero) file digested: long enough to be stopped twice. */
const SIZE = 768 * 1024 * 1024;

describe("README sync-handler example", () => {
  it("digest.ts › two deploys mid-job › each returns snooze(0) after a checkpoint; the next resumes from it; the checksum covers the whole file once", async () => {
    const digest = readmeFiles()["digest.ts"];
    expect(digest).toContain("return snooze(0)");
    expect(digest).toContain("ctx.checkpoint(");
    const dir = linkedApp({ "digest.ts": digest as string });
    const path = join(tempDir(), "zeros.bin");
    const fd = openSync(path, "w");
    ftruncateSync(fd, SIZE);
    closeSync(fd);
    const events: string[] = [];
    const metrics: MetricsSink = { emit: (name) => void events.push(name) };
    const backend = await memoryBackend();
    const soniq = new Soniq({
      backend,
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
    const id = await fileDigest.enqueue({ path });
    /** The offset of the job's last durable checkpoint (0 before the first). */
    const offset = async () => {
      const row = await backend.jobGet({ id });
      return row?.checkpoint ? (JSON.parse(row.checkpoint) as { offset: number }).offset : 0;
    };
    const offsets: number[] = [];
    for (let deploy = 0; deploy < 2; deploy++) {
      const before = await offset();
      const worker = soniq.worker({ shutdownTimeout: 0.2 });
      await worker.start();
      await waitFor(async () => (await offset()) > before, 30_000, "a new checkpoint");
      const exit = await worker.stop();
      expect(exit.exitCode).toBe(1); // the deadline path: the thread was asked to stop
      expect(await soniq.getJob(id)).toMatchObject({
        status: "queued",
        attempts: 0,
        lastError: null,
        workerId: null,
      });
      offsets.push(await offset());
    }
    expect(events.filter((e) => e === "job_snoozed")).toHaveLength(2);
    expect(offsets[1]).toBeGreaterThan(offsets[0] as number);
    expect(offsets[1]).toBeLessThan(SIZE); // stopped mid-file both times
    const last = soniq.worker();
    await last.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "done", 60_000, "done");
    await last.stop();
    // All zeros: a stays 1, b counts the bytes (mod 65521) — each byte counted exactly once.
    expect(await soniq.getJob(id)).toMatchObject({
      attempts: 1,
      result: { adler32: (((SIZE % 65521) << 16) | 1) >>> 0, bytes: SIZE },
    });
    await soniq.close();
  }, 120_000);
});
