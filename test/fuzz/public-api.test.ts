/**
 * Fuzz of the public API (issue 26 item 2) on a SQLite file and on PostgreSQL: `soniq.job(...)`
 * options, `enqueue`/`enqueueMany` arguments and options, `soniq.jobs.*` filters, cursors and
 * bulk actions, `soniq.deadLetters.*`, `soniq.queues.*`, schedules and remote answers, with
 * arbitrary strings (NUL, lone surrogates, huge), numbers (NaN, ±Infinity, -0, 1e308), JSON
 * shapes and depths. The oracle: every call succeeds or throws a SoniqError with a documented
 * code; a refused call changes no row (counts per queue × status, dead letters, queues and
 * schedules compared before and after); an accepted enqueue reads back the arguments it was
 * given. Fixed seed (test/helpers/fuzz.ts); `FUZZ_SEED`/`FUZZ_RUNS` explore further.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { Soniq } from "../../src/index.js";
import {
  anyNumber,
  anyText,
  anyValue,
  coded,
  fuzzParameters,
  mostly,
  optionsOf,
} from "../helpers/fuzz.js";
import {
  dropSchemas,
  freshSchema,
  postgresAvailable,
  TEST_DATABASE_URL,
} from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

const hasPostgres = await postgresAvailable();

/** Job names: the registered ones (so enqueues get through) or anything. */
const jobName = fc.oneof(fc.constantFrom("fuzz.echo", "fuzz.strict", "fuzz.ok"), anyText);
/** Queue names: valid ones, unicode, or anything. */
const queueName = fc.oneof(
  fc.constantFrom("fuzz", "work", "other", "a.b:c-d_e"),
  fc.stringMatching(/^[A-Za-z0-9_.:-]{1,100}$/),
  anyText,
);
const instantValue = mostly(
  fc.oneof(
    fc.date({ noInvalidDate: false }),
    fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    fc.constantFrom("2026-01-01T00:00:00Z", "2026-01-01T00:00:00+01:00", "2026-13-01T00:00:00Z"),
  ),
);
const enqueueOptions = optionsOf({
  delay: mostly(fc.oneof(fc.integer({ min: 0, max: 10 * 365 * 86_400 }), anyNumber)),
  runAt: instantValue,
  priority: mostly(anyNumber),
  queue: mostly(queueName),
  maxAttempts: mostly(anyNumber),
  dedupKey: mostly(anyText),
  uniqueByArgs: mostly(fc.boolean()),
});
const texts = mostly(fc.oneof(anyText, fc.array(anyText, { maxLength: 3 })));
const jobQuery = optionsOf({
  status: mostly(
    fc.oneof(
      fc.constantFrom("queued", "scheduled", "processing", "done", "cancelled", "dead_letter"),
      fc.array(fc.constantFrom("queued", "scheduled", "done"), { maxLength: 3 }),
    ),
  ),
  queue: mostly(fc.oneof(queueName, fc.array(queueName, { maxLength: 3 }))),
  name: texts,
  id: texts,
  dedupKey: mostly(anyText),
  error: mostly(anyText),
  args: mostly(
    optionsOf({
      path: mostly(fc.oneof(anyText, fc.array(anyText, { maxLength: 3 }), fc.constant("to"))),
      equals: mostly(fc.oneof(anyText, anyNumber, fc.boolean())),
    }),
  ),
  createdAfter: instantValue,
  createdBefore: instantValue,
  finishedAfter: instantValue,
  finishedBefore: instantValue,
});
const deadQuery = optionsOf({
  reason: texts,
  queue: mostly(fc.oneof(queueName, fc.array(queueName, { maxLength: 3 }))),
  name: texts,
  id: texts,
  deadAfter: instantValue,
  deadBefore: instantValue,
});
const pageOptions = optionsOf({
  cursor: mostly(fc.oneof(anyText, fc.constant(null))),
  limit: mostly(fc.oneof(fc.integer({ min: 1, max: 1000 }), anyNumber)),
});
/** Bulk options; the property forces a dry run or a count that cannot match, so nothing changes. */
const bulkOptions = {
  batchSize: mostly(fc.oneof(fc.integer({ min: 1, max: 1000 }), anyNumber)),
  expectedCount: mostly(anyNumber),
};

interface Target {
  name: string;
  url: string;
  schema?: string;
  /** Runs per property (PostgreSQL's calls are slower). */
  runs: number;
}

const targets: Target[] = [{ name: "sqlite", url: "", runs: 60 }];
if (hasPostgres) {
  targets.push({
    name: "postgres",
    url: TEST_DATABASE_URL,
    schema: freshSchema("soniq_fuzz"),
    runs: 25,
  });
}

describe.each(targets)("public API fuzz › $name", (target) => {
  let soniq: Soniq;
  /** A second instance that is never connected: registrations only. */
  const registry = new Soniq({ databaseUrl: "memory:", logLevel: "silent" });
  const registryEcho = registry.job({ name: "reg.echo", handler: async () => null });

  beforeAll(async () => {
    const url = target.url || `sqlite:${tempDir()}/fuzz.db`;
    soniq = new Soniq({
      databaseUrl: url,
      logLevel: "silent",
      ...(target.schema ? { schema: target.schema } : {}),
    });
    soniq.job({ name: "fuzz.echo", queue: "fuzz", handler: async () => null });
    soniq.job({
      name: "fuzz.strict",
      queue: "fuzz",
      args: z.object({ to: z.string() }),
      handler: async () => null,
    });
    soniq.job({ name: "fuzz.ok", queue: "work", handler: async () => ({ ok: true }) });
    soniq.job({
      name: "fuzz.fail",
      queue: "work",
      maxAttempts: 1,
      handler: async () => {
        throw new Error("always fails");
      },
    });
    soniq.schedule({
      id: "fuzz.tick",
      job: soniq.definitions.get("fuzz.ok") as never,
      every: 3600,
      args: {},
    });
    await soniq.setup();
    await soniq.schedules.sync();
    await soniq.enqueue("fuzz.echo", { user: { id: 42 }, text: "a\u0000b" }, { delay: 86_400 });
    await soniq.enqueue("fuzz.echo", { n: 1 }, { dedupKey: "seed-key", delay: 86_400 });
    const doneId = await soniq.enqueue("fuzz.ok", {});
    const deadId = await soniq.enqueue("fuzz.fail", { why: "\uD800" });
    const worker = soniq.worker({ queues: ["work"], pollInterval: 0.05 });
    await worker.start();
    await waitFor(
      async () =>
        (await soniq.deadLetters.get(deadId)) !== null &&
        (await soniq.jobs.get(doneId))?.status === "done",
      30_000,
      "the seed jobs to finish",
    );
    await worker.stop();
  });
  afterAll(async () => {
    await soniq?.close();
    await registry.close();
    if (target.schema) await dropSchemas([target.schema]);
  });

  /** What a refused call must not change. */
  async function snapshot(): Promise<string> {
    const [cells, dead, queues, schedules] = await Promise.all([
      soniq.jobs.countByQueueStatus(),
      soniq.deadLetters.count(),
      soniq.queues.list(),
      soniq.schedules.list(),
    ]);
    return JSON.stringify({
      cells: cells.map((c) => `${c.queue}/${c.status}=${c.count}`).sort(),
      dead,
      queues: queues.map((q) => [q.name, q.paused, q.maxRunning, q.unclaimableAfter]),
      schedules: schedules.map((s) => [s.id, s.paused, s.nextRunAt]),
    });
  }

  /** Runs `call`; when it is refused (or `unchanged`), the store must read as before. */
  async function unchangedIfRefused<T>(
    call: () => T | Promise<T>,
    unchanged = false,
  ): Promise<{ ok: true; value: T } | { ok: false; code: string }> {
    const before = await snapshot();
    const outcome = await coded(call);
    if (!outcome.ok || unchanged) expect(await snapshot()).toBe(before);
    return outcome;
  }

  it("enqueue: any name, arguments and options succeed and read back, or are refused with a code and write nothing", async () => {
    await fc.assert(
      fc.asyncProperty(jobName, anyValue, enqueueOptions, async (name, args, options) => {
        const outcome = await unchangedIfRefused(() => soniq.enqueue(name, args, options));
        if (!outcome.ok) return;
        const job = await soniq.getJob(outcome.value);
        expect(job).not.toBeNull();
        if (options.dedupKey === undefined && options.uniqueByArgs !== true) {
          expect(job?.args).toEqual(JSON.parse(JSON.stringify(args)));
        }
      }),
      fuzzParameters(target.runs),
    );
  });

  it("enqueueMany: one bad item writes nothing", async () => {
    const item = optionsOf({ name: jobName, args: anyValue, options: mostly(enqueueOptions) });
    await fc.assert(
      fc.asyncProperty(fc.array(item, { maxLength: 4 }), async (items) => {
        await unchangedIfRefused(() => soniq.enqueueMany(items as never));
      }),
      fuzzParameters(target.runs),
    );
  });

  it("job definitions: any options register or are refused with a code", async () => {
    const jobOptions = optionsOf({
      name: mostly(
        fc.oneof(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}(\.[a-z][a-z0-9_]{0,8}){0,2}$/), anyText),
      ),
      queue: mostly(queueName),
      priority: mostly(anyNumber),
      maxAttempts: mostly(anyNumber),
      retry: mostly(
        optionsOf({
          kind: mostly(fc.constantFrom("exponential", "fixed", "none")),
          base: mostly(anyNumber),
          max: mostly(anyNumber),
          jitter: mostly(anyNumber),
        }),
      ),
      timeout: mostly(anyNumber),
      uniqueByArgs: mostly(fc.boolean()),
      resultRetention: mostly(anyNumber),
      handler: mostly(fc.constant(async () => null)),
      args: anyValue,
      handlerModule: mostly(anyText),
      exportName: mostly(anyText),
    });
    const kind = fc.constantFrom("job", "syncJob", "remoteJob");
    await fc.assert(
      fc.asyncProperty(kind, jobOptions, async (k, options) => {
        await coded(() => registry[k](options as never));
      }),
      fuzzParameters(target.runs * 2),
    );
  });

  it("jobs.list and jobs.count: any filter and page read or are refused with a code; a whole page is the count", async () => {
    await fc.assert(
      fc.asyncProperty(mostly(jobQuery), mostly(pageOptions), async (query, page) => {
        const listed = await unchangedIfRefused(
          () => soniq.jobs.list(query as never, page as never),
          true,
        );
        const counted = await unchangedIfRefused(() => soniq.jobs.count(query as never), true);
        const cursor = (page as { cursor?: unknown } | null | undefined)?.cursor;
        if (listed.ok && counted.ok && cursor == null && listed.value.nextCursor === null) {
          expect(listed.value.jobs.length).toBe(counted.value);
        }
      }),
      fuzzParameters(target.runs),
    );
  });

  it("dead letters: any filter and page read or are refused with a code", async () => {
    await fc.assert(
      fc.asyncProperty(mostly(deadQuery), mostly(pageOptions), async (query, page) => {
        await unchangedIfRefused(() => soniq.deadLetters.list(query as never, page as never), true);
        await unchangedIfRefused(() => soniq.deadLetters.count(query as never), true);
      }),
      fuzzParameters(target.runs),
    );
  });

  it("bulk actions (dry run or a count that cannot match): answered or refused, and nothing changes", async () => {
    const jobsBulk = optionsOf({
      action: mostly(fc.constantFrom("cancel", "retry", "delete")),
      ids: mostly(fc.array(anyText, { maxLength: 3 })),
      filter: mostly(jobQuery),
      ...bulkOptions,
    });
    const deadBulk = optionsOf({
      ids: mostly(fc.array(anyText, { maxLength: 3 })),
      filter: mostly(deadQuery),
      ...bulkOptions,
    });
    const which = fc.constantFrom("jobs", "replayMany", "deleteMany");
    await fc.assert(
      fc.asyncProperty(which, jobsBulk, deadBulk, fc.boolean(), async (w, jobs, dead, dry) => {
        const guard = dry ? { dryRun: true } : { expectedCount: 987_654_321 };
        await unchangedIfRefused(
          () =>
            w === "jobs"
              ? soniq.jobs.bulk({ ...jobs, ...guard } as never)
              : soniq.deadLetters[w]({ ...dead, ...guard } as never),
          true,
        );
      }),
      fuzzParameters(target.runs),
    );
  });

  it("one job, dead letter, schedule or remote job by an arbitrary id: found, null or refused, and nothing changes", async () => {
    const call = fc.constantFrom(
      "jobs.get",
      "jobs.cancel",
      "jobs.retry",
      "jobs.delete",
      "getJob",
      "getDeadLetter",
      "deadLetters.get",
      "deadLetters.replay",
      "deadLetters.delete",
      "schedules.show",
      "schedules.pause",
      "schedules.resume",
      "schedules.runNow",
      "schedules.remove",
      "schedules.runs",
      "remote.show",
      "remote.pollNow",
    );
    await fc.assert(
      fc.asyncProperty(call, anyText, anyValue, async (name, id, extra) => {
        const [group, method] = name.split(".") as [string, string | undefined];
        await unchangedIfRefused(() => {
          if (method === undefined)
            return (soniq as never as Record<string, (id: string) => unknown>)[group]?.(id);
          const api = (
            soniq as never as Record<string, Record<string, (...a: unknown[]) => unknown>>
          )[group];
          return api?.[method]?.(id, ...(extra === undefined ? [] : [extra]));
        }, true);
      }),
      fuzzParameters(target.runs * 2),
    );
  });

  it("queues: any name and settings are applied or refused with a code; a refused write changes nothing", async () => {
    const settings = optionsOf({
      paused: mostly(fc.boolean()),
      maxRunning: mostly(
        fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.constant(null), anyNumber),
      ),
      unclaimableAfter: mostly(
        fc.oneof(fc.integer({ min: 1, max: 31_536_000 }), fc.constant(null), anyNumber),
      ),
    });
    const write = optionsOf({ create: mostly(fc.boolean()) });
    const history = optionsOf({
      queue: mostly(fc.oneof(queueName, fc.constant(null))),
      windowSeconds: mostly(fc.oneof(fc.integer({ min: 60, max: 86_400 }), anyNumber)),
    });
    const which = fc.constantFrom("set", "pause", "resume", "history");
    await fc.assert(
      fc.asyncProperty(which, queueName, settings, write, history, async (w, name, s, o, h) => {
        await unchangedIfRefused<unknown>(() => {
          if (w === "set") return soniq.queues.set(name, s as never, o as never);
          if (w === "history") return soniq.queues.history(h as never);
          return soniq.queues[w](name, o as never);
        });
      }),
      fuzzParameters(target.runs),
    );
  });

  it("schedules: any declaration or preview is accepted or refused with a code", async () => {
    const timing = {
      cron: mostly(
        fc.constantFrom("*/5 * * * *", "0 9 * * 1-5", "0 0 31 2 *", "@hourly", "61 * * * *"),
      ),
      every: mostly(fc.oneof(fc.integer({ min: 1, max: 86_400 }), anyNumber)),
      timezone: mostly(fc.constantFrom("UTC", "Europe/Paris", "America/New_York", "Mars/Olympus")),
    };
    const preview = optionsOf({
      ...timing,
      count: mostly(fc.integer({ min: 1, max: 1000 })),
      from: instantValue,
    });
    const declaration = optionsOf({
      id: mostly(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}(\.[a-z][a-z0-9_]{0,8})?$/)),
      job: mostly(fc.constant(registryEcho)),
      ...timing,
      args: mostly(fc.constant({})),
      missed: mostly(
        optionsOf({
          policy: mostly(fc.constantFrom("skip", "run_once", "run_all")),
          grace: mostly(anyNumber),
          within: mostly(anyNumber),
          max: mostly(anyNumber),
        }),
      ),
      overlap: mostly(fc.constantFrom("allow", "skip")),
      enqueue: mostly(
        optionsOf({
          queue: mostly(queueName),
          priority: mostly(anyNumber),
          maxAttempts: mostly(anyNumber),
        }),
      ),
      startAt: instantValue,
      endAt: instantValue,
      history: mostly(anyNumber),
    });
    await fc.assert(
      fc.asyncProperty(preview, declaration, async (p, d) => {
        await unchangedIfRefused(() => soniq.schedules.preview(p as never), true);
        await coded(() => registry.schedule(d as never));
      }),
      fuzzParameters(target.runs),
    );
  });

  it("remote answers to arbitrary targets: stored, early or refused with a code", async () => {
    const remoteTarget = mostly(
      fc.oneof(
        optionsOf({ jobId: mostly(anyText) }),
        optionsOf({ taskId: mostly(anyText), job: mostly(jobName) }),
      ),
    );
    const which = fc.constantFrom("complete", "fail", "resolve");
    await fc.assert(
      fc.asyncProperty(which, remoteTarget, anyValue, anyValue, async (w, t, value, extra) => {
        await unchangedIfRefused<unknown>(() => {
          if (w === "complete") return soniq.remote.complete(t as never, value);
          if (w === "fail") return soniq.remote.fail(t as never, value as never, extra as never);
          return soniq.remote.resolve(value as never, extra as never);
        });
      }),
      fuzzParameters(target.runs),
    );
  });

  /** The inputs the fuzz found wrong (each threw a raw error before its fix), as fixed cases. */
  it("regressions: each input the fuzz found is refused with its code", async () => {
    const refusal = async (call: () => unknown) => {
      const before = await snapshot();
      const outcome = await coded(call);
      expect(await snapshot()).toBe(before);
      return outcome.ok ? "accepted" : outcome.code;
    };
    // String() of a prototype-less object threw a TypeError while the message was built.
    const nameless = Object.create(null) as object;
    expect(await refusal(() => registry.job({ name: nameless, "": undefined } as never))).toBe(
      "INVALID_OPTION",
    );
    expect(
      await refusal(() => soniq.enqueue("fuzz.echo", {}, { priority: nameless } as never)),
    ).toBe("INVALID_ENQUEUE_OPTION");
    // An args filter without a path; a filter field that is neither text nor a list.
    expect(await refusal(() => soniq.jobs.list({ args: {} } as never))).toBe("INVALID_OPTION");
    expect(await refusal(() => soniq.deadLetters.list({ id: false } as never))).toBe(
      "INVALID_OPTION",
    );
    expect(await refusal(() => soniq.jobs.count(null as never))).toBe("INVALID_OPTION");
    // Page options that are not an object, a cursor that is not text.
    expect(await refusal(() => soniq.jobs.list({}, null as never))).toBe("INVALID_OPTION");
    expect(await refusal(() => soniq.deadLetters.list({}, { cursor: 5 } as never))).toBe(
      "INVALID_OPTION",
    );
    // A schedule history limit that is not a count reached PostgreSQL as "false".
    expect(await refusal(() => soniq.schedules.runs("fuzz.tick", false as never))).toBe(
      "INVALID_OPTION",
    );
    expect(await refusal(() => soniq.schedules.show("fuzz.tick", { runs: 0.5 }))).toBe(
      "INVALID_OPTION",
    );
    // An instant PostgreSQL's timestamps cannot hold (4714 BC).
    expect(
      await refusal(() => soniq.deadLetters.list({ deadAfter: "-004713-11-23T23:59:59.999Z" })),
    ).toBe("INVALID_OPTION");
    // A bulk action whose ids are not a list; a request that is not an object.
    expect(
      await refusal(() => soniq.deadLetters.replayMany({ ids: 0, dryRun: true } as never)),
    ).toBe("INVALID_OPTION");
    expect(await refusal(() => soniq.jobs.bulk(null as never))).toBe("INVALID_OPTION");
    // A remote answer naming its job by something that is not text reached SQLite's binder.
    expect(
      await refusal(() => soniq.remote.complete({ taskId: "t-1", job: new Date(0) } as never, "x")),
    ).toBe("INVALID_OPTION");
    // A preview from something that is not a Date.
    expect(
      await refusal(() => soniq.schedules.preview({ every: 60, from: "yesterday" as never })),
    ).toBe("INVALID_SCHEDULE");
    // An id with U+0000 names nothing, on every store (PostgreSQL cannot take it as a parameter,
    // and used to answer INVALID_INPUT for schedules where the others said NOT_FOUND).
    for (const call of [
      () => soniq.schedules.show("a\u0000b"),
      () => soniq.schedules.pause("a\u0000b"),
      () => soniq.schedules.resume("a\u0000b"),
      () => soniq.schedules.runNow("a\u0000b"),
      () => soniq.schedules.remove("a\u0000b"),
      () => soniq.jobs.cancel("a\u0000b"),
      () => soniq.jobs.retry("a\u0000b"),
      () => soniq.jobs.delete("a\u0000b"),
      () => soniq.deadLetters.replay("a\u0000b"),
      () => soniq.deadLetters.delete("a\u0000b"),
    ]) {
      expect(await refusal(call)).toBe("NOT_FOUND");
    }
    expect(await soniq.schedules.runs("a\u0000b")).toEqual([]);
    expect(await soniq.jobs.get("a\u0000b")).toBeNull();
  });
});
