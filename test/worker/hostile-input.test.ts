/**
 * Hostile input behaves the same on each engine of test-backends.ts SUITE_KINDS (a SQLite file and PostgreSQL): anything JSON admits
 * (NUL characters, lone surrogates, odd keys) round-trips faithfully through arguments, results
 * and errors; anything JSON would change is rejected at enqueue; no row is left `processing`.
 */
import { pino } from "pino";
import { expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { describeEachBackend } from "../helpers/backend-targets.js";
import { waitFor } from "../helpers/wait.js";

const NASTY = {
  nul: "a\u0000b",
  lone: "x\ud800y\udfffz",
  emoji: "🎵\u200d",
  quotes: "\"'`\\",
  keys: { "": 1, __proto__x: 2, "a.b": 3, "\u0000": 4 },
  big: 12345678901234,
  nested: [[[null, true, false, -0.5, 1e-7]]],
};

describeEachBackend("hostile input", (target) => {
  it("arguments, results and errors round-trip; nothing is left processing", async () => {
    const soniq = new Soniq({
      backend: await target.open(),
      env: {},
      logger: pino({ level: "silent" }),
      pollInterval: 0.05,
    });
    await soniq.setup();
    const echo = soniq.job({ name: "echo.back", handler: async (args: typeof NASTY) => args });
    const thrower = soniq.job({
      name: "throws.nasty",
      maxAttempts: 1,
      handler: async (args: typeof NASTY) => {
        throw new Error(`bad ${args.nul} ${args.lone}`);
      },
    });
    const throwsNull = soniq.job({
      name: "throws.null",
      maxAttempts: 1,
      handler: async () => {
        throw null;
      },
    });
    const unserialisable = soniq.job({
      name: "returns.bigint",
      maxAttempts: 1,
      handler: async () => 1n,
    });
    const a = await echo.enqueue(NASTY);
    const b = await thrower.enqueue(NASTY);
    const c = await throwsNull.enqueue({});
    const d = await unserialisable.enqueue({});
    // Rejected at enqueue, nothing written.
    await expect(
      echo.enqueue({ ...NASTY, when: new Date() } as typeof NASTY),
    ).rejects.toMatchObject({ code: "INVALID_PAYLOAD" });
    await expect(echo.enqueue({ ...NASTY, n: Number.NaN } as typeof NASTY)).rejects.toMatchObject({
      code: "INVALID_PAYLOAD",
    });
    expect((await soniq.stats()).total).toBe(4);

    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => {
      const s = await soniq.stats();
      return s.done + s.deadLetter === 4;
    }, 20_000);
    await worker.stop();
    const done = await soniq.getJob(a);
    expect(done?.args).toEqual(NASTY);
    expect(done?.result).toEqual(NASTY);
    const dead = await soniq.getDeadLetter(b);
    expect(dead?.args).toEqual(NASTY);
    expect(dead?.lastError).toContain("Error: bad a");
    expect(dead?.lastError).not.toContain("\u0000");
    expect(dead?.lastError?.isWellFormed()).toBe(true);
    expect((await soniq.getDeadLetter(c))?.lastError).toBe("non-Error thrown (null): null");
    expect((await soniq.getDeadLetter(d))?.lastError).toContain("INVALID_PAYLOAD");
    expect(await soniq.stats()).toMatchObject({
      processing: 0,
      queued: 0,
      done: 1,
      deadLetter: 3,
    });
    await soniq.close();
  });

  it("a result that is not JSON (BigInt, function, cycle) or over maxPayloadBytes › dead-lettered invalid_result after one attempt, not retried to maxAttempts", async () => {
    const soniq = new Soniq({
      backend: await target.open(),
      env: {},
      logger: pino({ level: "silent" }),
      pollInterval: 0.05,
      maxPayloadBytes: 10_000,
    });
    await soniq.setup();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const results: Record<string, unknown> = {
      bigint: 1n,
      fn: () => 1,
      cyclic,
      huge: "x".repeat(20_000),
    };
    const runs: Record<string, number> = {};
    const job = soniq.job({
      name: "returns.bad",
      maxAttempts: 5,
      retry: { kind: "fixed", delay: 0 },
      handler: async (args: { kind: string }) => {
        runs[args.kind] = (runs[args.kind] ?? 0) + 1;
        return results[args.kind];
      },
    });
    const reasons: string[] = [];
    soniq.events.on("job_dead_lettered", (e) => reasons.push(e.reason));
    const ids = new Map<string, string>();
    for (const kind of Object.keys(results)) ids.set(kind, await job.enqueue({ kind }));
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    await waitFor(async () => (await soniq.stats()).deadLetter === ids.size, 20_000);
    await worker.stop();
    for (const [kind, id] of ids) {
      const dead = await soniq.getDeadLetter(id);
      expect(dead?.reason, kind).toBe("invalid_result");
      expect(dead?.attempts, kind).toBe(1);
      expect(dead?.lastError, kind).toContain("INVALID_PAYLOAD: result of returns.bad");
      expect(runs[kind], kind).toBe(1);
    }
    expect(reasons).toEqual([
      "invalid_result",
      "invalid_result",
      "invalid_result",
      "invalid_result",
    ]);
    await soniq.close();
  });
});
