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
  // Found by chaos:short (SQLite, seed 693935358): a job NACK'd (start TTL) and claimed again by
  // the same worker before the first claim's run had settled lost its table entry when that run
  // settled (the table deleted by job id), so the drain stopped the worker with the row processing.
  it("begin › same job claimed again before its first claim's run settled › waits for the new claim's outcome", async () => {
    let finish: (() => void) | undefined;
    const parts = await workerParts((soniq) => {
      soniq.job({
        name: "drain.job",
        handler: () =>
          new Promise<void>((r) => {
            finish = r;
          }),
      });
    });
    const { runtime, soniq, claim, table, machine, backend } = parts;
    await runtime.completions.start();
    await runtime.heartbeat.start();
    const id = await soniq.enqueue("drain.job", {});
    const [first] = await claim();
    let reclaimed = false;
    table.track(
      first as NonNullable<typeof first>,
      async (entry) => {
        // What a stale start does: free the slot, NACK unstarted; meanwhile the row comes back.
        table.freeSlot(entry);
        await backend.jobNack({ id, owner: entry.owner });
        const [again] = await claim();
        table.track(
          again as NonNullable<typeof again>,
          (e) => runtime.runner.run(e),
          async () => {},
        );
        reclaimed = true;
      },
      async () => {},
    );
    await waitFor(() => reclaimed && finish !== undefined, 5_000, "claimed again and started");
    expect(table.has(id)).toBe(true);
    expect(table.size).toBe(1);
    machine.requestStop("SIGTERM");
    let ended = false;
    const exit = runtime.drain.begin().finally(() => {
      ended = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(ended).toBe(false);
    expect(await backend.jobGet({ id })).toMatchObject({ status: "processing" });
    finish?.();
    expect(await exit).toEqual({ reason: "drained", exitCode: 0, released: [] });
    expect(await backend.jobGet({ id })).toMatchObject({ status: "done" });
  });
});
