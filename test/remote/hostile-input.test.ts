/**
 * Hostile input to remote jobs, on each engine of test-backends.ts SUITE_KINDS (a SQLite file and PostgreSQL): ids that are not UUIDs,
 * task ids PostgreSQL cannot store (NUL, an unpaired surrogate), operator resolutions without a
 * reason, list limits out of range. Each gets the same coded error on every backend and leaves
 * the rows as they were.
 */

import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { accepted, done, failed, notSubmitted, Soniq } from "../../src/index.js";
import { describeEachBackend } from "../helpers/backend-targets.js";
import { waitForEvent } from "../helpers/events.js";
import { type RemoteProvider, startRemoteProvider } from "../helpers/remote-provider.js";
import { waitFor } from "../helpers/wait.js";
import { remoteInstance } from "./harness.js";

let provider: RemoteProvider;
beforeAll(async () => {
  provider = await startRemoteProvider();
});
afterAll(async () => {
  await provider.close();
});

const code = (value: string) => expect.objectContaining({ code: value });

describeEachBackend("remote jobs, hostile input", (target) => {
  const setup = async () => {
    const backend = await target.open();
    return { backend, ...remoteInstance(backend, provider) };
  };

  /** A job frozen by its submit's unusable answer (`raw`), with no worker left running. */
  const frozenBy = async (
    soniq: Soniq,
    job: ReturnType<typeof remoteInstance>["job"],
    raw: unknown,
  ) => {
    const id = await job.enqueue({ raw });
    const worker = soniq.worker();
    const frozen = waitForEvent(soniq, "remote_phase", (e) => e.phase === "frozen");
    await worker.start();
    await frozen;
    const exit = await worker.stop();
    expect(exit.exitCode).toBe(0);
    return id;
  };

  it("job ids › not a UUID › NOT_FOUND from show, resolve, pollNow, complete and fail", async () => {
    const { soniq } = await setup();
    for (const id of ["nope", "", "01a233c7-ff12-75a6-9e55-21131a08fd4", "' OR 1=1 --"]) {
      await expect(soniq.remote.show(id)).rejects.toThrow(code("NOT_FOUND"));
      await expect(soniq.remote.resolve(id, notSubmitted())).rejects.toThrow(code("NOT_FOUND"));
      await expect(soniq.remote.pollNow(id)).rejects.toThrow(code("NOT_FOUND"));
      if (id === "") continue; // an empty job id does not name a target: INVALID_OPTION
      await expect(soniq.remote.complete({ jobId: id }, { ok: 1 })).rejects.toThrow(
        code("NOT_FOUND"),
      );
      await expect(soniq.remote.fail({ jobId: id }, "no")).rejects.toThrow(code("NOT_FOUND"));
    }
    expect(await soniq.remote.counts()).toEqual({ submitting: 0, awaiting: 0, frozen: 0 });
  });

  it("task ids › NUL or an unpaired surrogate › INVALID_RESULT everywhere, nothing stored", async () => {
    for (const bad of ["tsk\u0000x", "\u0000", "tsk\ud800", "\udc00tsk"]) {
      expect(() => accepted(bad)).toThrow(code("INVALID_RESULT"));
    }
    expect(accepted("tsk_\u{1F3B5}").taskId).toBe("tsk_\u{1F3B5}"); // a surrogate pair is fine
    const { soniq, job } = await setup();
    await expect(soniq.remote.complete({ taskId: "tsk\u0000x" }, { ok: 1 })).rejects.toThrow(
      code("INVALID_RESULT"),
    );
    await expect(soniq.remote.fail({ taskId: "tsk\ud800" }, "no")).rejects.toThrow(
      code("INVALID_RESULT"),
    );
    // From submit: the provider may have the task, but its id is unusable → frozen, not stuck.
    const id = await frozenBy(soniq, job, { kind: "accepted", taskId: "tsk\u0000x" });
    expect(await soniq.remote.show(id)).toMatchObject({
      phase: "frozen",
      frozenReason: "invalid_result",
      taskId: null,
      workerId: null,
    });
    // An operator's resolution with such an id is refused and the job stays frozen.
    await expect(
      soniq.remote.resolve(id, { kind: "accepted", taskId: "a\u0000b" }),
    ).rejects.toThrow(code("INVALID_RESULT"));
    expect(await soniq.remote.show(id)).toMatchObject({ phase: "frozen", taskId: null });
    await soniq.remote.resolve(id, accepted("tsk_\u{1F3B5}"));
    expect(await soniq.remote.show(id)).toMatchObject({
      phase: "accepted",
      taskId: "tsk_\u{1F3B5}",
    });
  });

  it("resolve › failed with an empty reason › INVALID_OPTION, still frozen", async () => {
    const { soniq, job } = await setup();
    const id = await frozenBy(soniq, job, { kind: "accepted", taskId: "" });
    await expect(soniq.remote.resolve(id, failed(""))).rejects.toThrow(code("INVALID_OPTION"));
    expect(await soniq.remote.show(id)).toMatchObject({ phase: "frozen", answer: null });
    await soniq.remote.resolve(id, failed("operator gave up"));
    expect((await soniq.remote.show(id)).answer).toMatchObject({
      kind: "failed",
      error: "operator gave up",
    });
  });

  it("poll › done() with a BigInt, a cycle or a function › dead-lettered as not JSON, once, nothing stuck", async () => {
    const backend = await target.open();
    const soniq = new Soniq({
      backend,
      env: {},
      logger: pino({ level: "silent" }),
      pollInterval: 0.05,
      heartbeatInterval: 0.2,
      shutdownSettle: 0.1,
    });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const values: Record<string, unknown> = { bigint: { n: 10n }, cycle, fn: { f: () => 1 } };
    const job = soniq.remoteJob({
      name: "nonjson",
      submitTimeout: 5,
      pollEvery: 0.05,
      pollTimeout: 60,
      maxAttempts: 3,
      submit: async (args: { kind: string }) => accepted(`tsk_${args.kind}`),
      poll: async (taskId) => done(values[taskId.slice(4)]),
    });
    const ids = await Promise.all(Object.keys(values).map((kind) => job.enqueue({ kind })));
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.stats()).deadLetter === ids.length);
    expect((await worker.stop()).exitCode).toBe(0);
    for (const id of ids) {
      expect(await soniq.getJob(id)).toBeNull();
      const dead = await soniq.getDeadLetter(id);
      expect(dead?.reason).toBe("remote_failed");
      expect(dead?.lastError).toContain("INVALID_PAYLOAD");
      expect(dead?.attempts).toBeLessThanOrEqual(1);
      expect((await soniq.remote.show(id)).phase).toBe("finished");
    }
    expect(await soniq.remote.counts()).toEqual({ submitting: 0, awaiting: 0, frozen: 0 });
  });

  it("list › limit not an integer >= 1 › INVALID_OPTION", async () => {
    const { soniq } = await setup();
    for (const limit of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(soniq.remote.list("all", limit)).rejects.toThrow(code("INVALID_OPTION"));
    }
    expect(await soniq.remote.list("all", 1)).toEqual([]);
  });
});
