/**
 * Every abandoned or discarded write is visible: an error thrown after the abort is logged, a late
 * value from an abandoned handler is logged and emitted (`late_result_discarded`), and a sync
 * handler's uncloneable result is stored with the real error text.
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { waitForEvent } from "../helpers/events.js";
import { memoryBackend } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

const HANDLERS = new URL("../fixtures/thread-handlers.mjs", import.meta.url);

/** A Soniq on the memory backend whose log lines are collected as parsed objects. */
async function instance() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const soniq = new Soniq({
    backend: await memoryBackend(),
    logger: pino({ level: "info" }, sink),
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
  });
  return { soniq, lines };
}

describe("late and discarded results", () => {
  it("async handler › throws after its abort › logged, NACK'd", async () => {
    const { soniq, lines } = await instance();
    soniq.job({
      name: "t.abortable",
      handler: (_args: object, ctx) =>
        new Promise((_, reject) =>
          ctx.signal.addEventListener("abort", () => reject(new Error("stopped on abort"))),
        ),
    });
    const id = await soniq.enqueue("t.abortable", {});
    const worker = soniq.worker({ shutdownTimeout: 0.1, shutdownSettle: 0.5 });
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "processing");
    expect(await worker.stop()).toMatchObject({ exitCode: 1, released: [id] });
    const line = lines.find((l) => String(l.msg).includes("threw after its abort"));
    expect(line).toMatchObject({ job_id: id, reason: "shutdown_timeout" });
    expect(String(line?.err)).toContain("stopped on abort");
  });

  it("async handler › returns after its NACK › logged and late_result_discarded, nothing written", async () => {
    const { soniq, lines } = await instance();
    soniq.job({
      name: "t.stubborn",
      handler: () => new Promise((resolve) => setTimeout(() => resolve("late"), 400)),
    });
    const id = await soniq.enqueue("t.stubborn", {});
    const worker = soniq.worker({ shutdownTimeout: 0.05, shutdownSettle: 0.05 });
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "processing");
    const late = waitForEvent(soniq, "late_result_discarded", undefined, 5000);
    expect(await worker.stop()).toMatchObject({ released: [id] });
    expect(await late).toMatchObject({
      job_id: id,
      after: "shutdown_timeout",
      settled: "returned",
    });
    expect(lines.some((l) => String(l.msg).includes("an abandoned handler returned"))).toBe(true);
    expect(await soniq.getJob(id)).toMatchObject({ status: "queued", result: null, attempts: 0 });
  });

  it("sync handler › returns a value that cannot be cloned › dead-lettered invalid_result after one attempt (of 3), with the real error text", async () => {
    const { soniq } = await instance();
    soniq.syncJob({
      name: "t.uncloneable",
      handlerModule: HANDLERS,
      exportName: "uncloneable",
      maxAttempts: 3,
      retry: { kind: "fixed", delay: 0 },
    });
    const id = await soniq.enqueue("t.uncloneable", {});
    const worker = soniq.worker();
    await worker.start();
    const dead = await waitFor(() => soniq.getDeadLetter(id), 20_000, "dead letter");
    await worker.stop();
    expect(dead.lastError).toContain("cannot be sent back from its thread");
    expect(dead.lastError).not.toContain("non-Error thrown");
    expect(dead).toMatchObject({ reason: "invalid_result", attempts: 1 });
  });
});
