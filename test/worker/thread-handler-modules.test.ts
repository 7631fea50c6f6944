/** Thread-handler modules are checked on a thread at worker start; thread errors keep their identity. */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { linkedApp } from "../helpers/linked-app.js";
import { memoryBackend } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

async function instance() {
  return new Soniq({
    backend: await memoryBackend(),
    logger: pino({ level: "silent" }),
    env: {},
    pollInterval: 0.05,
  });
}

describe("thread-handler modules", () => {
  it("worker start › a thread-handler module with a syntax error › start fails naming file and line; nothing is claimed", async () => {
    const dir = linkedApp({
      "resize.ts": "export default function resize(args: { n: number }) {\n  return args.n +;\n}\n",
    });
    const soniq = await instance();
    const resize = soniq.syncJob<{ n: number }>({
      name: "image.resize",
      handlerModule: `${dir}/resize.ts`,
    });
    const id = await resize.enqueue({ n: 1 });
    const worker = soniq.worker();
    const error = await worker.start().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toMatchObject({ code: "WORKER_START" });
    expect((error as Error).message).toContain(
      `job image.resize: thread handler could not load ${dir}/resize.ts:2:`,
    );
    expect((error as Error).message).toContain("TransformError");
    expect(await worker.finished).toMatchObject({ reason: "start_failed", exitCode: 2 });
    expect(await soniq.getJob(id)).toMatchObject({ status: "queued", attempts: 0 });
    await soniq.close();
  });

  it("worker start › a module without the named export › start fails listing the exports it has", async () => {
    const soniq = await instance();
    soniq.syncJob({
      name: "t.wrong",
      handlerModule: new URL("../fixtures/thread-errors.mjs", import.meta.url),
      exportName: "nope",
    });
    const worker = soniq.worker();
    await expect(worker.start()).rejects.toThrow(
      /has no function export named nope \(its function exports: invalid\)/,
    );
    await soniq.close();
  });

  it("thread error › a handler throws an Error subclass › last_error keeps its name, message and stack", async () => {
    const soniq = await instance();
    const job = soniq.syncJob({
      name: "t.invalid",
      handlerModule: new URL("../fixtures/thread-errors.mjs", import.meta.url),
      exportName: "invalid",
      maxAttempts: 1,
    });
    const id = await job.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    const dead = await waitFor(() => soniq.getDeadLetter(id), 20_000, "dead-lettered");
    await worker.stop();
    expect(dead.lastError).toMatch(
      /^ValidationError: width must be positive\n\s+at invalid \(file:\/\/.*thread-errors\.mjs:12:/,
    );
    expect(dead.lastError).not.toContain("non-Error thrown");
    await soniq.close();
  });
});
