/**
 * Hand-off at enqueue, the backend half every backend with a desk keeps (contract/hand-off.ts):
 * a test taker that records how each reservation settled, and the cases PostgreSQL and SQLite
 * share. Each backend's own file adds what only it has (transactions, killed statements, the
 * SQLite probe's bound).
 */
import { expect, it } from "vitest";
import type {
  Backend,
  ClaimedJob,
  HandOffReservation,
  HandOffTaker,
} from "../../src/backends/contract/index.js";
import type { LocalHandOffDesk } from "../../src/backends/shared/hand-off-desk.js";
import { newJob } from "../contract/helpers.js";

/** A backend that hands off (PostgreSQL, SQLite). */
export type HandOffBackend = Backend & { readonly handOff: LocalHandOffDesk };

/** A test taker at the backend's desk: grants every reservation and records how each settled. */
export function handOffTaker(backend: HandOffBackend, workerId = "w-test") {
  const log: Array<{ queue: string; how: "deliver" | "cancel" | "lost"; job?: ClaimedJob }> = [];
  const asked: string[] = [];
  const t: HandOffTaker = {
    reserve(queue): HandOffReservation {
      asked.push(queue);
      return {
        workerId,
        deliver: (job) => void log.push({ queue, how: "deliver", job }),
        cancel: () => void log.push({ queue, how: "cancel" }),
        lost: () => void log.push({ queue, how: "lost" }),
      };
    },
  };
  const unregister = backend.handOff.register(t);
  return { log, asked, unregister };
}

/**
 * Registers the shared cases (call inside a `describe`).
 * @param open - a fresh, set-up backend (closed by the caller's hooks).
 * @param duplicateId - what the backend's error for a second row with the same id matches.
 */
export function handOffBackendCases(
  open: () => Promise<HandOffBackend>,
  duplicateId: Record<string, unknown>,
): void {
  it("hand-off › a queue with a due backlog, a paused or a limited queue › queued as usual, never ahead of the backlog", async () => {
    const backend = await open();
    // Due a second ago: SQLite's times are milliseconds, and two enqueues may share one.
    const first = newJob({ queue: "q", runAt: new Date(Date.now() - 1000) });
    await backend.jobEnqueue({ jobs: [first] }); // nobody registered: queued
    const { log } = handOffTaker(backend);
    const second = newJob({ queue: "q" });
    expect(await backend.jobEnqueue({ jobs: [second] })).toEqual([
      { id: second.id, inserted: true },
    ]);
    expect(log).toEqual([{ queue: "q", how: "cancel" }]);
    expect(await backend.jobGet({ id: second.id })).toMatchObject({
      status: "queued",
      workerId: null,
      startKnown: true,
    });
    const order = await backend.jobClaim({ workerId: "c", queues: ["q"], limit: 10 });
    expect(order.map((j) => j.id)).toEqual([first.id, second.id]);
    // Paused, then limited: the claim skips such queues, so does the hand-off.
    await backend.admin.queueSet({ name: "p", paused: true });
    await backend.admin.queueSet({ name: "m", maxRunning: 5 });
    const paused = newJob({ queue: "p" });
    const limited = newJob({ queue: "m" });
    await backend.jobEnqueue({ jobs: [paused] });
    await backend.jobEnqueue({ jobs: [limited] });
    expect(log.slice(1)).toEqual([
      { queue: "p", how: "cancel" },
      { queue: "m", how: "cancel" },
    ]);
    expect((await backend.jobGet({ id: paused.id }))?.status).toBe("queued");
    expect((await backend.jobGet({ id: limited.id }))?.status).toBe("queued");
  });

  it("hand-off › the desk asks each worker with the job's name › one that declines it is passed over; none granting: queued as usual", async () => {
    const backend = await open();
    const asked: Array<[string, string]> = [];
    // A worker of this process with no definition of the name declines (worker/hand-off.ts).
    const unregister = backend.handOff.register({
      reserve(queue, name) {
        asked.push([queue, name]);
        return undefined;
      },
    });
    const unknown = newJob({ queue: "q", name: "new.job" });
    await backend.jobEnqueue({ jobs: [unknown] });
    expect(asked).toEqual([["q", "new.job"]]);
    expect(await backend.jobGet({ id: unknown.id })).toMatchObject({
      status: "queued",
      workerId: null,
    });
    unregister();
  });

  it("hand-off › a job of version 2 › the desk asks with the version; a worker that declines it leaves it queued", async () => {
    const backend = await open();
    const asked: Array<[string, string, number | undefined]> = [];
    // A worker whose definition of the name is older than the job declines (worker/hand-off.ts).
    const unregister = backend.handOff.register({
      reserve(queue, name, version) {
        asked.push([queue, name, version]);
        return undefined;
      },
    });
    const newer = newJob({ queue: "q", name: "mail.send", version: 2 });
    await backend.jobEnqueue({ jobs: [newer] });
    expect(asked).toEqual([["q", "mail.send", 2]]);
    expect(await backend.jobGet({ id: newer.id })).toMatchObject({
      status: "queued",
      workerId: null,
      version: 2,
    });
    unregister();
  });

  it("hand-off › only future rows or other queues' backlog › handed off, written as a claim writes it", async () => {
    const backend = await open();
    await backend.jobEnqueue({ jobs: [newJob({ queue: "q", delaySeconds: 3600 })] });
    await backend.jobEnqueue({ jobs: [newJob({ queue: "other" })] });
    const { log } = handOffTaker(backend, "w-1");
    const job = newJob({ queue: "q", meta: '{"a":1}', traceContext: "tp" });
    expect(await backend.jobEnqueue({ jobs: [job] })).toEqual([{ id: job.id, inserted: true }]);
    expect(log.map((l) => l.how)).toEqual(["deliver"]);
    const delivered = log[0]?.job;
    expect(delivered).toMatchObject({
      id: job.id,
      name: job.name,
      queue: "q",
      args: "{}",
      attempts: 0,
      interruptions: 0,
      unchargedRecoveries: 0,
      workerId: "w-1",
      meta: '{"a":1}',
      traceContext: "tp",
    });
    const row = await backend.jobGet({ id: job.id });
    expect(row).toMatchObject({
      status: "processing",
      workerId: "w-1",
      claimToken: delivered?.claimToken,
      startKnown: false,
    });
    expect(row?.claimToken).toMatch(/^[0-9a-f-]{36}$/);
    expect(row?.startedAt?.getTime()).toBe(row?.createdAt.getTime());
    expect(row?.scheduledAt.getTime()).toBe(row?.createdAt.getTime());
    // Fenced like any claim: the owner can finish it, nobody else can.
    const complete = (workerId: string) =>
      backend.jobComplete({
        id: job.id,
        owner: { workerId, claimToken: delivered?.claimToken ?? "" },
        result: null,
        resultRetentionSeconds: 60,
      });
    expect(await complete("other")).toBe(false);
    expect(await complete("w-1")).toBe(true);
  });

  it("hand-off › a batch, a delayed job or a run-at time › no reservation is asked for", async () => {
    const backend = await open();
    const { asked } = handOffTaker(backend);
    await backend.jobEnqueue({ jobs: [newJob(), newJob()] });
    await backend.jobEnqueue({ jobs: [newJob({ delaySeconds: 5 })] });
    await backend.jobEnqueue({ jobs: [newJob({ runAt: new Date(Date.now() - 1000) })] });
    expect(asked).toEqual([]);
  });

  it("hand-off › a dedup hit › the holder's id, the reservation cancelled, nothing claimed", async () => {
    const backend = await open();
    const holder = newJob({ queue: "q", dedupKey: "k", delaySeconds: 3600 });
    await backend.jobEnqueue({ jobs: [holder] });
    const { log } = handOffTaker(backend);
    const again = newJob({ queue: "q", dedupKey: "k" });
    expect(await backend.jobEnqueue({ jobs: [again] })).toEqual([
      { id: holder.id, inserted: false },
    ]);
    expect(log).toEqual([{ queue: "q", how: "cancel" }]);
    expect(await backend.jobGet({ id: again.id })).toBeNull();
    expect(await backend.jobGet({ id: holder.id })).toMatchObject({ status: "queued" });
    expect((await backend.jobStats()).processing).toBe(0);
  });

  it("hand-off › the database refuses the insert › rejects, the reservation cancelled, nothing claimed", async () => {
    const backend = await open();
    const job = newJob({ queue: "later", delaySeconds: 3600 });
    await backend.jobEnqueue({ jobs: [job] });
    const { log } = handOffTaker(backend);
    // The same id again, due now in another queue: the primary key refuses it (nothing committed).
    await expect(
      backend.jobEnqueue({ jobs: [{ ...job, queue: "q", delaySeconds: 0 }] }),
    ).rejects.toMatchObject(duplicateId);
    expect(log).toEqual([{ queue: "q", how: "cancel" }]);
    expect(await backend.jobGet({ id: job.id })).toMatchObject({
      queue: "later",
      status: "queued",
    });
    expect((await backend.jobStats()).processing).toBe(0);
  });
}
