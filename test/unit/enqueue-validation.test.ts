import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseDatabaseUrl } from "../../src/backends/select.js";
import { Soniq } from "../../src/index.js";
import { MAX_PAYLOAD_DEPTH } from "../../src/jobs/payload.js";
import { memoryBackend } from "../helpers/test-backends.js";

async function instance() {
  const backend = await memoryBackend();
  const soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
  const job = soniq.job({
    name: "mail.send",
    args: z.object({ to: z.string().email() }),
    handler: async (args) => args.to,
  });
  return { soniq, backend, job };
}

describe("enqueue validation", () => {
  it("soniq.job › version not an integer from 1 to 2147483647, or upgrade without version >= 2 › INVALID_OPTION, nothing registered", async () => {
    const { soniq } = await instance();
    const handler = async () => undefined;
    for (const version of [0, -1, 1.5, 2147483648, Number.NaN, "2"]) {
      expect(() => soniq.job({ name: "bad.version", version: version as number, handler })).toThrow(
        expect.objectContaining({ code: "INVALID_OPTION" }),
      );
    }
    expect(() =>
      soniq.job({ name: "bad.upgrade", upgrade: (args: unknown) => args, handler }),
    ).toThrow(/upgrade needs version >= 2/);
    expect(() =>
      soniq.job({ name: "bad.upgrade", version: 2, upgrade: "no" as never, handler }),
    ).toThrow(/upgrade must be a function/);
    // Nothing half-registered: the names are still free.
    const ok = soniq.job({ name: "bad.version", version: 2147483647, handler });
    expect(ok.version).toBe(2147483647);
    expect(soniq.job({ name: "bad.upgrade", handler }).version).toBe(1);
  });

  it("enqueue › a definition of version 4 › the row carries version 4", async () => {
    const { soniq, backend } = await instance();
    const job = soniq.job({ name: "report.build", version: 4, handler: async () => undefined });
    const id = await job.enqueue({});
    const [many] = await job.enqueueMany([{ args: {} }]);
    expect((await backend.jobGet({ id }))?.version).toBe(4);
    expect((await backend.jobGet({ id: many ?? "" }))?.version).toBe(4);
  });

  it("rejects bad arguments before anything is written", async () => {
    const { soniq, job } = await instance();
    await expect(job.enqueue({ to: "not-an-email" })).rejects.toMatchObject({
      code: "INVALID_ARGS",
    });
    await expect(
      job.enqueueMany([{ args: { to: "a@example.com" } }, { args: { to: "nope" } }]),
    ).rejects.toMatchObject({ code: "INVALID_ARGS" });
    expect((await soniq.stats()).total).toBe(0);
  });

  it("rejects payloads that would not round-trip or exceed the limit", async () => {
    const { soniq } = await instance();
    soniq.job({ name: "any.job", handler: async () => null });
    const cases: unknown[] = [
      { n: Number.NaN },
      { d: new Date() },
      { b: 1n },
      [1, undefined],
      { f: () => 1 },
    ];
    for (const args of cases) {
      await expect(soniq.enqueue("any.job", args)).rejects.toMatchObject({
        code: "INVALID_PAYLOAD",
      });
    }
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(soniq.enqueue("any.job", circular)).rejects.toMatchObject({
      code: "INVALID_PAYLOAD",
    });
    await expect(
      soniq.enqueue("any.job", { s: "x".repeat(2 * 1024 * 1024) }),
    ).rejects.toMatchObject({
      code: "INVALID_PAYLOAD",
    });
    // NUL characters and lone surrogates are JSON and are kept.
    const id = await soniq.enqueue("any.job", { s: "a\u0000b\ud800c" });
    expect((await soniq.getJob(id))?.args).toEqual({ s: "a\u0000b\ud800c" });
    expect((await soniq.stats()).total).toBe(1);
  });

  it("enqueue › arrays and objects nested deeper than MAX_PAYLOAD_DEPTH › INVALID_PAYLOAD, never a RangeError; at the limit accepted", async () => {
    const { soniq } = await instance();
    soniq.job({ name: "any.job", handler: async () => null });
    const nested = (levels: number, wrap: (v: unknown) => unknown) => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = wrap(value);
      return value;
    };
    for (const levels of [MAX_PAYLOAD_DEPTH + 1, 5000, 100_000]) {
      for (const wrap of [(v: unknown) => [v], (v: unknown) => ({ a: v })]) {
        const err = await soniq.enqueue("any.job", nested(levels, wrap)).catch((e: unknown) => e);
        expect(err, `${levels}`).toMatchObject({ code: "INVALID_PAYLOAD" });
        expect((err as Error).message).toContain(`deeper than ${MAX_PAYLOAD_DEPTH} levels`);
        expect((err as Error).message.length).toBeLessThan(300);
      }
    }
    const id = await soniq.enqueue(
      "any.job",
      nested(MAX_PAYLOAD_DEPTH, (v) => [v]),
    );
    expect(JSON.stringify((await soniq.getJob(id))?.args)).toHaveLength(2 * MAX_PAYLOAD_DEPTH + 1);
  });

  it("rejects naive, invalid and conflicting times", async () => {
    const { job } = await instance();
    const args = { to: "a@example.com" };
    await expect(job.enqueue(args, { runAt: "2030-01-01T10:00:00" })).rejects.toMatchObject({
      code: "INVALID_ENQUEUE_OPTION",
    });
    await expect(job.enqueue(args, { runAt: new Date("nope") })).rejects.toMatchObject({
      code: "INVALID_ENQUEUE_OPTION",
    });
    await expect(job.enqueue(args, { delay: -1 })).rejects.toMatchObject({
      code: "INVALID_ENQUEUE_OPTION",
    });
    await expect(job.enqueue(args, { delay: 1, runAt: new Date() })).rejects.toMatchObject({
      code: "INVALID_ENQUEUE_OPTION",
    });
    await expect(job.enqueue(args, { priority: 1.5 })).rejects.toMatchObject({
      code: "INVALID_ENQUEUE_OPTION",
    });
    await expect(job.enqueue(args, { queue: "has space" })).rejects.toMatchObject({
      code: "INVALID_ENQUEUE_OPTION",
    });
    // @ts-expect-error unknown option
    await expect(job.enqueue(args, { dealy: 5 })).rejects.toMatchObject({
      code: "INVALID_ENQUEUE_OPTION",
    });
    await expect(job.enqueue(args, { runAt: "2026-02-30T10:00:00Z" })).rejects.toMatchObject({
      code: "INVALID_ENQUEUE_OPTION",
    });
    await expect(job.enqueue(args, { runAt: new Date(8.64e15) })).rejects.toMatchObject({
      code: "INVALID_ENQUEUE_OPTION",
    });
    await expect(job.enqueue(args, { dedupKey: "k\u0000" })).rejects.toMatchObject({
      code: "INVALID_ENQUEUE_OPTION",
    });
    await expect(job.enqueue(args, { dedupKey: "lone\ud800" })).rejects.toMatchObject({
      code: "INVALID_ENQUEUE_OPTION",
    });
    expect(typeof (await job.enqueue(args, { runAt: "2028-02-29T10:00:00Z" }))).toBe("string");
    const ok = await job.enqueue(args, { runAt: "2030-01-01T10:00:00+01:00" });
    expect(typeof ok).toBe("string");
  });

  it("rejects unknown names by default and bad names always", async () => {
    const { soniq } = await instance();
    await expect(soniq.enqueue("not.registered", {})).rejects.toMatchObject({
      code: "UNKNOWN_JOB",
    });
    await expect(soniq.enqueue("Bad Name", {})).rejects.toMatchObject({ code: "INVALID_JOB_NAME" });
    expect(() => soniq.job({ name: "Mail.Send", handler: async () => null })).toThrow(
      /INVALID_JOB_NAME/,
    );
    expect(() => soniq.job({ name: "mail.send", handler: async () => null })).toThrow(
      /DUPLICATE_JOB/,
    );
  });

  it("deduplicates by key and by arguments", async () => {
    const { soniq } = await instance();
    const unique = soniq.job({
      name: "report.build",
      uniqueByArgs: true,
      handler: async () => null,
    });
    const a = await unique.enqueue({ day: "2026-11-30", team: "x" });
    const b = await unique.enqueue({ team: "x", day: "2026-11-30" });
    const c = await unique.enqueue({ team: "y", day: "2026-11-30" });
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    const k1 = await soniq.enqueue("report.build", { any: 1 }, { dedupKey: "k" });
    const k2 = await soniq.enqueue("report.build", { any: 2 }, { dedupKey: "k" });
    expect(k2).toBe(k1);
  });

  it("soniq.batch / soniq.flow › a misspelt key, open not a boolean, connection on one job › INVALID_ENQUEUE_OPTION, nothing written", async () => {
    const { soniq, job } = await instance();
    const member = { job, args: { to: "a@example.com" } };
    const refusals = [
      soniq.batch({ jobs: [member], onComplet: member } as never),
      soniq.batch({ jobs: [member], open: "yes" } as never),
      soniq.batch({ jobs: [{ ...member, option: { priority: 1 } }] } as never),
      soniq.batch({ jobs: [{ ...member, options: { connection: {} } }] } as never),
      soniq.flow({ ...member, childs: [member] } as never),
      soniq.flow({ ...member, children: [{ ...member, options: { connection: {} } }] } as never),
    ];
    for (const refused of refusals) {
      await expect(refused).rejects.toMatchObject({ code: "INVALID_ENQUEUE_OPTION" });
    }
    expect(await soniq.jobs.list({})).toMatchObject({ jobs: [] });
  });

  it("refuses transactional enqueue off PostgreSQL", async () => {
    const { job } = await instance();
    const connection = { query: async () => ({ rows: [], rowCount: 0 }) };
    await expect(job.enqueue({ to: "a@example.com" }, { connection })).rejects.toMatchObject({
      code: "UNSUPPORTED",
    });
  });

  it("two instances in one process do not see each other's definitions", () => {
    const one = new Soniq({ databaseUrl: "memory:", env: {}, logger: pino({ level: "silent" }) });
    const two = new Soniq({ databaseUrl: "memory:", env: {}, logger: pino({ level: "silent" }) });
    one.job({ name: "only.here", handler: async () => null });
    expect(one.definitions.has("only.here")).toBe(true);
    expect(two.definitions.has("only.here")).toBe(false);
  });

  it("picks the backend from the database URL", () => {
    expect(parseDatabaseUrl("postgres://u@h/db").kind).toBe("postgres");
    expect(parseDatabaseUrl("postgresql://u@h/db").kind).toBe("postgres");
    expect(parseDatabaseUrl("sqlite:./x.db")).toEqual({ kind: "sqlite", path: "./x.db" });
    expect(parseDatabaseUrl("/var/lib/app/jobs.sqlite")).toEqual({
      kind: "sqlite",
      path: "/var/lib/app/jobs.sqlite",
    });
    expect(parseDatabaseUrl("memory:").kind).toBe("memory");
    expect(() => parseDatabaseUrl("mysql://h/db")).toThrow(/INVALID_DATABASE_URL/);
    expect(() => new Soniq({ databaseUrl: "redis://x", env: {} })).toThrow(/INVALID_DATABASE_URL/);
  });
});
