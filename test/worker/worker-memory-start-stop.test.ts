// The public Worker's start-up life: a stop before start leaves start() callable (the CLI starts
// a worker that a signal already stopped while its module was loading).
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { MemoryBackend, Soniq } from "../../src/index.js";

describe("Worker", () => {
  it("start › stop() came before start() › starts nothing and is finished, exit 0", async () => {
    const soniq = new Soniq({
      backend: new MemoryBackend(),
      logger: pino({ level: "silent" }),
      env: {},
    });
    soniq.job({ name: "life.job", handler: async () => 1 });
    const worker = soniq.worker();
    const stopped = worker.stop("SIGTERM");
    await worker.start();
    expect(await stopped).toEqual({ reason: "drained", exitCode: 0, released: [] });
    expect(worker.state).toBe("STOPPED");
    expect(await soniq.workers()).toEqual([]);
  });
});
