// The public Worker's start-up life: a stop before start leaves start() callable (the CLI starts
// a worker that a signal already stopped while its module was loading); an idle worker's stop
// goes straight to `stopped` without a `draining` heartbeat, a busy one's reports `draining`.
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { Soniq } from "../../src/index.js";
import { memoryBackend } from "../helpers/test-backends.js";

describe("Worker", () => {
  it("start › stop() came before start() › starts nothing and is finished, exit 0", async () => {
    const soniq = new Soniq({
      backend: await memoryBackend(),
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

  it("stop › an idle worker › no draining heartbeat: the row goes straight to stopped", async () => {
    const backend = await memoryBackend();
    const soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
    let release: (() => void) | undefined;
    const job = soniq.job({
      name: "life.job",
      handler: () => new Promise<void>((r) => (release = r)),
    });
    const beats = vi.spyOn(backend.admin, "workerBeat");
    let answered = 0;
    const claim = backend.jobClaim.bind(backend);
    vi.spyOn(backend, "jobClaim").mockImplementation(async (params) => {
      const jobs = await claim(params);
      answered += 1;
      return jobs;
    });
    const idle = soniq.worker();
    await idle.start();
    // Idle: its first claim has answered (a claim in flight at the stop is something it holds).
    for (let i = 0; i < 200 && answered === 0; i++) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setImmediate(r));
    beats.mockClear();
    expect(await idle.stop("SIGTERM")).toMatchObject({ exitCode: 0 });
    expect(beats.mock.calls.filter(([p]) => p.status === "draining")).toEqual([]);
    expect((await backend.workerList({ heartbeatTimeoutSeconds: 60 }))[0]).toMatchObject({
      id: idle.id,
      status: "stopped",
    });
    // With a job in flight the row says draining until the job is done.
    const busy = soniq.worker();
    await busy.start();
    await job.enqueue({});
    const started = () => release !== undefined;
    for (let i = 0; i < 200 && !started(); i++) await new Promise((r) => setTimeout(r, 10));
    beats.mockClear();
    const stopped = busy.stop("SIGTERM");
    for (let i = 0; i < 200 && beats.mock.calls.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(beats.mock.calls.some(([p]) => p.status === "draining")).toBe(true);
    release?.();
    expect(await stopped).toMatchObject({ exitCode: 0 });
  });
});
