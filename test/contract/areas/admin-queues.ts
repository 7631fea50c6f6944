/**
 * Operations contract: queues. A paused queue is skipped by every claim (in-flight jobs go on)
 * and resumes within one wake-up, also across processes; `maxRunning` is held by the claim, so
 * ten worker processes never run more than it at once (sampled).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { Backend } from "../../../src/backends/contract/index.js";
import type { Soniq } from "../../../src/index.js";
import { waitFor } from "../../helpers/wait.js";
import type { ContractContext } from "../helpers.js";
import { ownerOf } from "../helpers.js";
import { claimOne, put, soniqOn } from "./admin-helpers.js";

const script = fileURLToPath(new URL("../worker-process.ts", import.meta.url));

/** Worker processes on the store, or in-process workers for memory (one process only). */
async function startWorkers(
  target: ContractContext["target"],
  b: Backend,
  queue: string,
  count: number,
  concurrency: number,
  children: ChildProcess[],
  inProcess: Array<{ stop(): Promise<unknown> }>,
): Promise<void> {
  const shared = target.share?.(b);
  if (!shared) {
    const soniq = soniqOn(b);
    soniq.job({
      name: "op.sleep",
      queue,
      handler: (args: { ms: number }) => new Promise((r) => setTimeout(r, args.ms)),
    });
    for (let i = 0; i < count; i++) {
      const worker = soniq.worker({ concurrency, queues: [queue] });
      await worker.start();
      inProcess.push(worker);
    }
    return;
  }
  const ready: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", script, shared.databaseUrl, shared.schema, queue, String(concurrency)],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    children.push(child);
    let err = "";
    ready.push(
      new Promise((resolve, reject) => {
        child.stderr?.on("data", (d: Buffer) => {
          err += d.toString();
          if (err.includes("ready\n")) resolve();
        });
        child.on("exit", (code) => reject(new Error(`worker process exited ${code}: ${err}`)));
      }),
    );
  }
  await Promise.all(ready);
}

export function adminQueueCases({ make, target }: ContractContext): void {
  describe("operations: queues", () => {
    const children: ChildProcess[] = [];
    const inProcess: Array<{ stop(): Promise<unknown> }> = [];
    afterEach(async () => {
      for (const child of children.splice(0)) {
        child.kill("SIGTERM");
        if (child.exitCode === null) await new Promise((r) => child.once("exit", r));
      }
      await Promise.all(inProcess.splice(0).map((w) => w.stop()));
    });

    it("queueSet › paused › claims skip it, in-flight rows untouched, resume claims again", async () => {
      const b = await make();
      const soniq: Soniq = soniqOn(b);
      const running = await put(b, { queue: "mail" });
      const j = await claimOne(b, "w1", "mail");
      expect(j.id).toBe(running);
      const waiting = await put(b, { queue: "mail" });
      await put(b, { queue: "other" });
      expect(await soniq.queues.pause("mail")).toMatchObject({
        name: "mail",
        paused: true,
        queued: 1,
        processing: 1,
      });
      expect(await b.jobClaim({ workerId: "w1", queues: null, limit: 10 })).toHaveLength(1); // "other" only
      expect(await b.jobClaim({ workerId: "w1", queues: ["mail"], limit: 10 })).toEqual([]);
      // The running job is not a drain's business: it finishes normally.
      expect(
        await b.jobComplete({
          id: running,
          owner: ownerOf(j),
          result: null,
          resultRetentionSeconds: 60,
        }),
      ).toBe(true);
      await soniq.queues.resume("mail");
      expect(
        (await b.jobClaim({ workerId: "w1", queues: ["mail"], limit: 10 })).map((x) => x.id),
      ).toEqual([waiting]);
      const listed = await soniq.queues.list();
      expect(listed.find((q) => q.name === "mail")).toMatchObject({
        paused: false,
        maxRunning: null,
      });
    });

    it("queue write › a name nothing knows › NOT_FOUND with a did-you-mean; create: true configures it", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      await put(b, { queue: "mail" });
      soniq.job({ name: "op.declared", queue: "declared", handler: async () => undefined });
      await expect(soniq.queues.pause("mial")).rejects.toMatchObject({
        code: "NOT_FOUND",
        message: expect.stringContaining('did you mean "mail"?'),
        details: { queue: "mial", didYouMean: "mail" },
      });
      await expect(soniq.queues.set("zzzzzz", { maxRunning: 2 })).rejects.toMatchObject({
        code: "NOT_FOUND",
        message: expect.not.stringContaining("did you mean"),
      });
      await expect(soniq.queues.resume("zzzzzz")).rejects.toMatchObject({ code: "NOT_FOUND" });
      expect((await soniq.queues.list()).map((q) => q.name)).not.toContain("mial");
      // A queue a job definition names is known before its first job.
      expect(await soniq.queues.pause("declared")).toMatchObject({ paused: true });
      expect(await soniq.queues.pause("zzzzzz", { create: true })).toMatchObject({
        name: "zzzzzz",
        paused: true,
      });
      // Configured once, it is known: no create needed any more.
      expect(await soniq.queues.resume("zzzzzz")).toMatchObject({ paused: false });
    });

    it("queueSet › maxRunning › a claim takes only the room left", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      for (let i = 0; i < 5; i++) await put(b, { queue: "lim" });
      await soniq.queues.set("lim", { maxRunning: 2 });
      expect(await b.jobClaim({ workerId: "w1", queues: null, limit: 10 })).toHaveLength(2);
      expect(await b.jobClaim({ workerId: "w2", queues: ["lim"], limit: 10 })).toHaveLength(0);
      await soniq.queues.set("lim", { maxRunning: 3 });
      // The limited-queue list may be cached for a second (PostgreSQL): wait for the new room.
      await waitFor(
        async () => (await b.jobClaim({ workerId: "w2", queues: ["lim"], limit: 10 })).length === 1,
        3000,
        "room for one more",
      );
      await soniq.queues.set("lim", { maxRunning: null });
      await waitFor(
        async () => (await b.jobClaim({ workerId: "w3", queues: null, limit: 10 })).length === 2,
        3000,
        "no limit",
      );
      await expect(soniq.queues.set("lim", { maxRunning: 0 })).rejects.toMatchObject({
        code: "INVALID_OPTION",
      });
    });

    it("queueSet › maxRunning › the limited claim takes only the names given; another name stays queued", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      const unknown = await put(b, { queue: "lim", name: "new.job", priority: -5 });
      const known = await put(b, { queue: "lim", name: "known.job" });
      await soniq.queues.set("lim", { maxRunning: 5 });
      const claimed: string[] = [];
      // The limited-queue list may be cached for a second (PostgreSQL): wait for the limited path.
      await waitFor(
        async () => {
          const rows = await b.jobClaim({
            workerId: "w1",
            queues: ["lim"],
            names: ["known.job"],
            limit: 10,
          });
          claimed.push(...rows.map((j) => j.id));
          return claimed.length > 0;
        },
        3000,
        "the known job claimed",
      );
      expect(claimed).toEqual([known]);
      expect(await b.jobGet({ id: unknown })).toMatchObject({ status: "queued", attempts: 0 });
    });

    it("maxRunning on two queues › a claim smaller than their rooms › serves them in queue-name order", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      for (const queue of ["lim-b", "lim-a"]) {
        for (let i = 0; i < 3; i++) await put(b, { queue });
      }
      // Limited in the opposite order of their names (PostgreSQL once served them in the order
      // of their configuration rows).
      await soniq.queues.set("lim-b", { maxRunning: 5 });
      await soniq.queues.set("lim-a", { maxRunning: 5 });
      for (const queues of [null, ["lim-b", "lim-a"]]) {
        const claimed = await b.jobClaim({ workerId: "w1", queues, limit: 4 });
        expect(claimed.map((j) => j.queue)).toEqual(["lim-a", "lim-a", "lim-a", "lim-b"]);
        await b.jobNackMany({
          items: claimed.map((j) => ({ id: j.id, owner: ownerOf(j) })),
        });
      }
    });

    it("pause in one process › another process's worker claims nothing; resume › it runs them within a wake-up", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      // Before its first job: nothing knows "p" yet.
      await soniq.queues.pause("p", { create: true });
      await startWorkers(target, b, "p", 1, 2, children, inProcess);
      const ids = [await soniq.enqueue("op.sleep", { ms: 1 }, { queue: "p" })];
      ids.push(await soniq.enqueue("op.sleep", { ms: 1 }, { queue: "p" }));
      // Several of the worker's polls (0.1 s) and the enqueue's own wake-up pass: nothing claimed.
      await new Promise((r) => setTimeout(r, 600));
      expect(await soniq.jobs.count({ queue: "p", status: "queued" })).toBe(2);
      await soniq.queues.resume("p");
      await waitFor(
        async () => (await soniq.jobs.count({ queue: "p", status: "done" })) === 2,
        5000,
        "both done after resume",
      );
    });

    it("maxRunning 2 › ten worker processes of three slots › never more than 2 processing (sampled)", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      await soniq.queues.set("lim10", { maxRunning: 2 }, { create: true });
      await startWorkers(target, b, "lim10", 10, 3, children, inProcess);
      const jobs = 16;
      for (let i = 0; i < jobs; i++)
        await soniq.enqueue("op.sleep", { ms: 120 }, { queue: "lim10" });
      let most = 0;
      let samples = 0;
      await waitFor(
        async () => {
          const running = await b.admin.jobCount({
            filter: { queue: ["lim10"], status: ["processing"] },
          });
          most = Math.max(most, running);
          samples += 1;
          return (await soniq.jobs.count({ queue: "lim10", status: "done" })) === jobs;
        },
        30_000,
        "every job done",
      );
      expect(samples).toBeGreaterThan(10);
      expect(most).toBeLessThanOrEqual(2);
      expect(most).toBe(2);
    }, 60_000);
  });
}
