// Job versions on a running worker (issue 25 item 2), on every backend: a job enqueued by a newer
// definition waits (not claimed, not handed off at enqueue) while only older workers run, and runs
// on an upgraded one; a job enqueued by older code is upgraded (`upgrade(args, fromVersion)`)
// before the schema check and runs; an upgrade that throws fails the attempt (retried, and
// dead-lettered `max_attempts_exceeded` only when the attempts run out). A remote job carries its
// version the same way: an older one is upgraded before it is submitted.
import { pino } from "pino";
import { expect, it } from "vitest";
import { z } from "zod";
import type { Backend } from "../../src/backends/contract/index.js";
import { accepted, done, Soniq } from "../../src/index.js";
import { describeEachBackend } from "../helpers/backend-targets.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });

/** An instance on `backend` with fast polling (one per code version, as two deploys would be). */
function instanceOn(backend: Backend): Soniq {
  return new Soniq({
    backend,
    logger: silent,
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
  });
}

describeEachBackend("worker: job versions", (target) => {
  it("worker › a job of a newer version › waits, never claimed nor handed off by the older worker; runs on an upgraded one", async () => {
    const backend = await target.open();
    const oldCode = instanceOn(backend);
    const ranOld: string[] = [];
    oldCode.job({
      name: "mail.send",
      handler: async (args: { to: string }) => {
        ranOld.push(args.to);
      },
    });
    const newCode = instanceOn(backend);
    const ranNew: string[][] = [];
    const send = newCode.job({
      name: "mail.send",
      version: 2,
      args: z.object({ recipients: z.array(z.string()) }),
      handler: async (args) => {
        ranNew.push(args.recipients);
      },
    });
    const oldWorker = oldCode.worker();
    await oldWorker.start();
    // Enqueued while the old worker is idle: it declines the hand-off, and its claims pass it by.
    const newer = await send.enqueue({ recipients: ["b", "c"] });
    expect((await backend.jobGet({ id: newer }))?.version).toBe(2);
    // A version-1 job enqueued after it runs on the old worker: its claims walked past `newer`.
    const older = await oldCode.enqueue("mail.send", { to: "a" });
    await waitFor(async () => (await oldCode.getJob(older))?.status === "done");
    expect(ranOld).toEqual(["a"]);
    expect(await newCode.getJob(newer)).toMatchObject({
      status: "queued",
      attempts: 0,
      workerId: null,
      startedAt: null,
      version: 2,
    });
    const newWorker = newCode.worker();
    await newWorker.start();
    await waitFor(async () => (await newCode.getJob(newer))?.status === "done");
    await newWorker.stop();
    await oldWorker.stop();
    expect(ranNew).toEqual([["b", "c"]]);
    expect(ranOld).toEqual(["a"]);
  });

  it("worker › a job enqueued by the older version › upgraded before the schema check, then run", async () => {
    const backend = await target.open();
    const oldCode = instanceOn(backend);
    oldCode.job({ name: "mail.send", handler: async () => undefined });
    const id = await oldCode.enqueue("mail.send", { to: "a" });
    const newCode = instanceOn(backend);
    const upgrades: Array<[unknown, number]> = [];
    newCode.job({
      name: "mail.send",
      version: 3,
      args: z.object({ recipients: z.array(z.string()) }),
      upgrade: (args, fromVersion) => {
        upgrades.push([args, fromVersion]);
        return { recipients: [(args as { to: string }).to] };
      },
      handler: async (args) => args.recipients,
    });
    const worker = newCode.worker();
    await worker.start();
    const done = await waitFor(async () => {
      const job = await newCode.getJob(id);
      return job?.status === "done" ? job : null;
    });
    await worker.stop();
    expect(upgrades).toEqual([[{ to: "a" }, 1]]);
    // The stored job keeps its arguments and version as enqueued; the handler got the upgrade.
    expect(done).toMatchObject({ version: 1, args: { to: "a" }, result: ["a"], attempts: 1 });
  });

  it("remote job of version 2 › enqueued with version 2; one enqueued by the older version is upgraded before its submission", async () => {
    const backend = await target.open();
    const oldCode = instanceOn(backend);
    oldCode.job({ name: "music.generate", handler: async () => undefined });
    const older = await oldCode.enqueue("music.generate", { prompt: "a" });
    const newCode = instanceOn(backend);
    const submitted: unknown[] = [];
    const generate = newCode.remoteJob({
      name: "music.generate",
      version: 2,
      submitTimeout: 5,
      pollEvery: 0.05,
      pollTimeout: 60,
      upgrade: (args) => ({ prompts: [(args as { prompt: string }).prompt] }),
      submit: async (args: { prompts: string[] }) => {
        submitted.push(args);
        return accepted(`tsk_${args.prompts.join("_")}`);
      },
      poll: async (taskId) => done(taskId),
    });
    const newer = await generate.enqueue({ prompts: ["b"] });
    expect((await backend.jobGet({ id: newer }))?.version).toBe(2);
    const worker = newCode.worker();
    await worker.start();
    await waitFor(async () => {
      const [a, b] = await Promise.all([newCode.getJob(older), newCode.getJob(newer)]);
      return a?.status === "done" && b?.status === "done";
    });
    await worker.stop();
    expect(submitted).toEqual(expect.arrayContaining([{ prompts: ["a"] }, { prompts: ["b"] }]));
    expect(submitted).toHaveLength(2);
  });

  it("worker › an upgrade that throws › the attempt fails and is retried; dead-lettered max_attempts_exceeded when the attempts run out", async () => {
    const backend = await target.open();
    const oldCode = instanceOn(backend);
    oldCode.job({ name: "mail.send", handler: async () => undefined });
    const id = await oldCode.enqueue("mail.send", { to: "a" }, { maxAttempts: 2 });
    const newCode = instanceOn(backend);
    let calls = 0;
    let ran = 0;
    newCode.job({
      name: "mail.send",
      version: 2,
      retry: { kind: "fixed", delay: 0 },
      upgrade: () => {
        calls += 1;
        throw new Error("cannot upgrade this one");
      },
      handler: async () => {
        ran += 1;
      },
    });
    const worker = newCode.worker();
    await worker.start();
    const dead = await waitFor(() => newCode.getDeadLetter(id));
    await worker.stop();
    expect(calls).toBe(2);
    expect(ran).toBe(0);
    expect(dead).toMatchObject({ reason: "max_attempts_exceeded", attempts: 2, version: 1 });
    expect(dead.lastError).toContain("cannot upgrade this one");
  });
});
