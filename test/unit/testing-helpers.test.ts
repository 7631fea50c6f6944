/**
 * `soniq/testing` (docs/testing.md): the instance's store swapped for an in-memory one on a fake
 * clock; manual mode runs jobs only in `drain()`, inline mode at enqueue (rejecting with the
 * handler's error); assertions read the store and list it when they fail.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isSoniqError, Soniq } from "../../src/index.js";
import { type SoniqTesting, startTesting } from "../../src/testing/index.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

const START = new Date("2030-01-01T00:00:00.000Z");
const open: Array<{ soniq: Soniq; testing?: SoniqTesting }> = [];

afterEach(async () => {
  for (const { soniq, testing } of open.splice(0)) {
    await testing?.stop();
    await soniq.close();
  }
  removeTempDirs();
});

class SmtpError extends Error {}

/** An app: a welcome email that enqueues a follow-up an hour later; "bad" addresses fail. */
function app(databaseUrl = "postgres://soniq-testing.invalid/never") {
  const soniq = new Soniq({ databaseUrl, logLevel: "silent" });
  const ran: string[] = [];
  const welcome = soniq.job({
    name: "email.welcome",
    maxAttempts: 2,
    retry: { kind: "fixed", delay: 60 },
    handler: async (args: { to: string; tags?: string[] }) => {
      ran.push(`welcome:${args.to}`);
      if (args.to === "bad") throw new SmtpError(`smtp refused ${args.to}`);
      await followUp.enqueue({ to: args.to }, { delay: 3600 });
      return { sent: args.to };
    },
  });
  const followUp = soniq.job({
    name: "email.follow_up",
    handler: async (args: { to: string }) => {
      ran.push(`follow_up:${args.to}`);
    },
  });
  const entry: { soniq: Soniq; testing?: SoniqTesting } = { soniq };
  open.push(entry);
  return { soniq, welcome, followUp, ran, entry };
}

describe("soniq/testing, manual mode", () => {
  it("drain › due jobs and what they enqueue when due › run; delayed ones only after clock.advance", async () => {
    const { soniq, welcome, followUp, ran, entry } = app();
    const testing = await startTesting(soniq, { now: START });
    entry.testing = testing;
    const id = await welcome.enqueue({ to: "ada@example.com" });
    expect(ran).toEqual([]);
    const [stored] = await testing.assertEnqueued(welcome, { to: "ada@example.com" });
    expect(stored).toMatchObject({ id, status: "queued", createdAt: START });

    const first = await testing.drain();
    expect(first).toMatchObject({ ran: 1, done: 1, failed: 0 });
    expect(first.jobs).toEqual([
      {
        id,
        name: "email.welcome",
        queue: "default",
        outcome: "done",
        result: { sent: "ada@example.com" },
      },
    ]);
    const [follow] = await testing.assertEnqueued(followUp, { to: "ada@example.com" });
    expect(follow?.status).toBe("scheduled");
    expect(follow?.scheduledAt).toEqual(new Date(START.getTime() + 3_600_000));
    expect((await testing.drain()).ran).toBe(0);

    testing.clock.advance(3_599_999);
    expect((await testing.drain()).ran).toBe(0);
    testing.clock.advance(1);
    expect(await testing.drain()).toMatchObject({ ran: 1, done: 1 });
    expect(ran).toEqual(["welcome:ada@example.com", "follow_up:ada@example.com"]);
    expect((await testing.enqueued("email.follow_up")).map((j) => j.status)).toEqual(["done"]);
  });

  it("drain › a failing job › failed with the thrown error, retried only once its back-off passed on the clock, then dead-lettered", async () => {
    const { soniq, welcome, entry } = app();
    const testing = await startTesting(soniq, { now: START });
    entry.testing = testing;
    await welcome.enqueue({ to: "bad" });
    const first = await testing.drain();
    expect(first).toMatchObject({ ran: 1, failed: 1 });
    expect(first.jobs[0]?.error).toBeInstanceOf(SmtpError);
    const [waiting] = await testing.enqueued(welcome);
    expect(waiting).toMatchObject({ status: "scheduled", attempts: 1 });
    expect(waiting?.lastError).toContain("smtp refused bad");
    testing.clock.advance(59_999);
    expect((await testing.drain()).ran).toBe(0);
    testing.clock.advance(1);
    const second = await testing.drain();
    expect(second).toMatchObject({ ran: 1, deadLettered: 1 });
    expect((await testing.enqueued(welcome))[0]?.status).toBe("dead_letter");
  });

  it("drain › a job that enqueues itself for ever › DRAIN_LIMIT after maxJobs runs, with the summary", async () => {
    const soniq = new Soniq({ logLevel: "silent" });
    open.push({ soniq });
    const loop = soniq.job({
      name: "loop.forever",
      handler: async (args: { n: number }) => {
        await loop.enqueue({ n: args.n + 1 });
      },
    });
    const testing = await startTesting(soniq, { maxJobs: 5 });
    open.push({ soniq, testing });
    await loop.enqueue({ n: 0 });
    const err = await testing.drain().catch((e: unknown) => e);
    expect(isSoniqError(err, "DRAIN_LIMIT")).toBe(true);
    // The bound stops the worker; a run it had already claimed finishes and is reported too.
    const { ran } = (err as { details: { summary: { ran: number } } }).details.summary;
    expect(ran).toBeGreaterThanOrEqual(5);
    expect(ran).toBeLessThanOrEqual(6);
    expect((await testing.drain({ maxJobs: 3 }).catch((e: unknown) => e)) as object).toHaveProperty(
      "code",
      "DRAIN_LIMIT",
    );
  });
});

describe("soniq/testing, inline mode", () => {
  it("enqueue › runs the job and what it enqueues when due before resolving; a handler's error rejects the enqueue as thrown", async () => {
    const { soniq, welcome, ran, entry } = app();
    const testing = await startTesting(soniq, { mode: "inline", now: START });
    entry.testing = testing;
    await welcome.enqueue({ to: "ada@example.com" });
    expect(ran).toEqual(["welcome:ada@example.com"]);
    await testing.assertEnqueued(welcome, { to: "ada@example.com" }, (j) => j.status === "done");
    await testing.assertEnqueued("email.follow_up", (j) => j.status === "scheduled");

    const rejected = welcome.enqueue({ to: "bad" });
    await expect(rejected).rejects.toBeInstanceOf(SmtpError);
    await expect(welcome.enqueue({ to: "bad" })).rejects.toThrow("smtp refused bad");

    testing.clock.advance(3_600_000);
    expect(await testing.drain()).toMatchObject({ done: 1 });
    expect(ran).toContain("follow_up:ada@example.com");
  });

  it("enqueueMany in parallel › every job runs before all enqueues resolve", async () => {
    const { soniq, welcome, ran, entry } = app();
    const testing = await startTesting(soniq, { mode: "inline", now: START });
    entry.testing = testing;
    await Promise.all(["a", "b", "c"].map((to) => welcome.enqueue({ to })));
    expect([...ran].sort()).toEqual(["welcome:a", "welcome:b", "welcome:c"]);
  });
});

describe("soniq/testing, assertions", () => {
  it("assertEnqueued / refuteEnqueued › partial deep args, asymmetric matchers, predicates › failure messages list the store", async () => {
    const { soniq, welcome, followUp, entry } = app();
    const testing = await startTesting(soniq, { now: START });
    entry.testing = testing;
    await welcome.enqueue({ to: "ada@example.com", tags: ["new", "eu"] });
    await followUp.enqueue({ to: "grace@example.com" }, { queue: "mail" });

    expect(await testing.enqueued(welcome, { tags: ["new", "eu"] })).toHaveLength(1);
    expect(await testing.enqueued(welcome, { tags: ["new"] })).toHaveLength(0);
    expect(await testing.enqueued(welcome, { to: expect.stringContaining("@") })).toHaveLength(1);
    expect(await testing.enqueued("email.follow_up", (j) => j.queue === "mail")).toHaveLength(1);
    await testing.refuteEnqueued(welcome, { to: "grace@example.com" });

    const missing = await testing
      .assertEnqueued(welcome, { to: "nobody@example.com" })
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: "ERR_ASSERTION" });
    const message = (missing as Error).message;
    expect(message).toContain(
      'expected a job "email.welcome" matching {"to":"nobody@example.com"} to be enqueued, but none was; the store holds 2 jobs:',
    );
    expect(message).toContain(
      '  - email.welcome {"to":"ada@example.com","tags":["new","eu"]} [queued, id ',
    );
    expect(message).toContain(
      '  - email.follow_up {"to":"grace@example.com"} [queued, queue mail, id ',
    );

    const present = await testing.refuteEnqueued("email.follow_up").catch((e: unknown) => e);
    expect((present as Error).message).toMatch(
      /^expected no job "email.follow_up" to be enqueued, but the store holds 1 job matching:\n {2}- email.follow_up \{"to":"grace@example.com"\} \[queued, queue mail, id /,
    );
  });
});

describe("soniq/testing, lifecycle", () => {
  it("startTesting › a new call › a fresh empty store; stop › the instance rejects with CLOSED, never reaching its database", async () => {
    const { soniq, welcome, entry } = app();
    const first = await startTesting(soniq);
    await welcome.enqueue({ to: "a" });
    expect(await first.enqueued(welcome)).toHaveLength(1);
    const second = await startTesting(soniq);
    entry.testing = second;
    expect(await second.enqueued(welcome)).toEqual([]);
    await second.stop();
    const err = await welcome.enqueue({ to: "b" }).catch((e: unknown) => e);
    expect(isSoniqError(err, "CLOSED")).toBe(true);
    expect(isSoniqError(await second.drain().catch((e: unknown) => e), "CLOSED")).toBe(true);
  });

  it("startTesting › an instance that already opened a SQLite file › INVALID_STATE; bad options › INVALID_OPTION", async () => {
    const { soniq, welcome } = app(`sqlite:${join(tempDir(), "app.db")}`);
    await soniq.setup();
    await welcome.enqueue({ to: "a" });
    const err = await startTesting(soniq).catch((e: unknown) => e);
    expect(isSoniqError(err, "INVALID_STATE")).toBe(true);
    const fresh = app().soniq;
    for (const bad of [
      { mode: "eager" },
      { maxJobs: 0 },
      { concurrency: 1.5 },
      { now: "soon" },
      { colour: 1 },
    ]) {
      const e = await startTesting(fresh, bad as never).catch((x: unknown) => x);
      expect(isSoniqError(e, "INVALID_OPTION"), JSON.stringify(bad)).toBe(true);
    }
    const testing = await startTesting(fresh);
    open.push({ soniq: fresh, testing });
    expect(() => testing.clock.advance(-1)).toThrow(/advance/);
    expect(() => testing.clock.set(0)).toThrow(/forward only/);
  });
});

describe("soniq/testing, other job kinds", () => {
  it("drain › a sync job on a worker thread, and a schedule's runNow › run like any job", async () => {
    const soniq = new Soniq({ logLevel: "silent" });
    const entry: { soniq: Soniq; testing?: SoniqTesting } = { soniq };
    open.push(entry);
    const cpu = soniq.syncJob<{ n: number }, { total: number }>({
      name: "math.cpu",
      handlerModule: new URL("../fixtures/thread-handlers.mjs", import.meta.url),
    });
    const report = soniq.job({ name: "reports.daily", handler: async () => "reported" });
    soniq.schedule({ id: "reports.daily", job: report, cron: "0 6 * * *", args: {} });
    const testing = await startTesting(soniq, { now: START });
    entry.testing = testing;
    await cpu.enqueue({ n: 4 });
    expect((await testing.drain()).jobs).toMatchObject([
      { name: "math.cpu", outcome: "done", result: { total: 4 } },
    ]);
    await soniq.schedules.sync();
    await soniq.schedules.runNow("reports.daily");
    await testing.assertEnqueued(report);
    expect((await testing.drain()).jobs).toMatchObject([
      { name: "reports.daily", outcome: "done", result: "reported" },
    ]);
  });
});

describe("soniq/testing, concurrency", () => {
  it("drain with concurrency 4 › 20 jobs each enqueuing a due child › all 40 run in one drain, none left", async () => {
    const soniq = new Soniq({ logLevel: "silent" });
    const entry: { soniq: Soniq; testing?: SoniqTesting } = { soniq };
    open.push(entry);
    const child = soniq.job({ name: "fan.child", handler: async () => "child" });
    const parent = soniq.job({
      name: "fan.parent",
      handler: async (args: { i: number }) => {
        await new Promise((resolve) => setImmediate(resolve));
        await child.enqueue({ i: args.i });
      },
    });
    const testing = await startTesting(soniq, { concurrency: 4 });
    entry.testing = testing;
    for (let i = 0; i < 20; i += 1) await parent.enqueue({ i });
    const summary = await testing.drain();
    expect(summary).toMatchObject({ ran: 40, done: 40 });
    expect(await soniq.jobs.count({ status: ["queued", "scheduled", "processing"] })).toBe(0);
  });
});
