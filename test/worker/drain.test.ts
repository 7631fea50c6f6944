// The drain on the memory backend, driven by the ShutdownMachine: drained (exit 0) and the
// deadline path (abort, settle, NACK; exit 1), with the worker row marked stopped.
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/wait.js";
import { workerParts } from "../helpers/worker-parts.js";

async function running(handler: (args: unknown, ctx: { signal: AbortSignal }) => Promise<unknown>) {
  const parts = await workerParts((soniq) => {
    soniq.job({ name: "drain.job", handler });
  });
  const { runtime, soniq, claim, table } = parts;
  await runtime.completions.start();
  await runtime.heartbeat.start();
  const id = await soniq.enqueue("drain.job", {});
  const [job] = await claim();
  table.track(
    job as NonNullable<typeof job>,
    (e) => runtime.runner.run(e),
    async () => {},
  );
  return { ...parts, id };
}

describe("Drain", () => {
  it("begin › in-flight job finishes in time › drained, exit 0, row done, worker stopped", async () => {
    let finish: (() => void) | undefined;
    const { machine, runtime, backend, id, events } = await running(
      () =>
        new Promise<void>((r) => {
          finish = r;
        }),
    );
    await waitFor(() => finish !== undefined, 5_000, "handler started");
    machine.requestStop("SIGTERM");
    const exit = runtime.drain.begin();
    expect(machine.state).toBe("DRAINING");
    finish?.();
    expect(await exit).toEqual({ reason: "drained", exitCode: 0, released: [] });
    expect(machine.state).toBe("STOPPED");
    expect(await backend.jobGet({ id })).toMatchObject({ status: "done" });
    const [row] = await backend.workerList({ heartbeatTimeoutSeconds: 60 });
    expect(row).toMatchObject({ id: "w1", status: "stopped" });
    expect(events.filter((e) => e.name !== "job_started").map((e) => e.name)).toEqual([
      "drain_started",
      "job_done",
      "worker_stopped",
    ]);
  });

  it("begin › job outlives shutdown_timeout › FORCE_TIMEOUT_PATH at the machine's deadline, NACK, exit 1", async () => {
    const { machine, runtime, backend, id, events } = await running(
      () => new Promise(() => undefined), // ignores its signal
    );
    const { deadlineAt } = machine.requestStop("SIGTERM");
    const exit = await runtime.drain.begin();
    expect(exit).toEqual({ reason: "shutdown_timeout", exitCode: 1, released: [id] });
    expect(machine.forcedAt).toBeGreaterThanOrEqual(deadlineAt);
    expect(await backend.jobGet({ id })).toMatchObject({ status: "queued", attempts: 0 });
    expect(events.filter((e) => e.name !== "job_started").map((e) => e.name)).toEqual([
      "drain_started",
      "force_timeout_path",
      "shutdown_nack",
      "worker_stopped",
    ]);
  });
});
