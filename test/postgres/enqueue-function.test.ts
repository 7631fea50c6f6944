// Enqueue from SQL (issue 31 item 5; docs/enqueue-from-sql.md): `soniq_enqueue(name, args,
// options)` called from psql — as another language's client would — inserts a job a running
// worker picks up (woken by the insert's NOTIFY at commit), never exists after a rollback, follows
// the library's dedup rule, stores every option, and refuses bad input with the library's error
// codes (SQLSTATE 22023) without writing anything; a Node process's waitFor on such a job ends
// with its result.
import { execFileSync } from "node:child_process";
import { pino } from "pino";
import { afterEach, expect, it } from "vitest";
import type { PgNotifier } from "../../src/backends/postgres/notifier.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { Soniq } from "../../src/index.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });

/** Runs `sql` through psql (from its standard input, ON_ERROR_STOP): exit code, output, errors. */
function psql(sql: string, verbose = false): { code: number; out: string; err: string } {
  const flags = verbose ? ["-v", "VERBOSITY=verbose"] : [];
  try {
    const out = execFileSync(
      "psql",
      [TEST_DATABASE_URL, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", ...flags],
      { encoding: "utf8", input: `${sql};`, stdio: ["pipe", "pipe", "pipe"] },
    );
    return { code: 0, out: out.trim(), err: "" };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { code: e.status, out: String(e.stdout ?? "").trim(), err: String(e.stderr ?? "") };
  }
}

/** A SQL string literal. */
const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;

describePostgres("postgres: soniq_enqueue() from SQL", () => {
  const schemas = usePostgresSchemas();
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close().catch(() => undefined);
  });

  async function open() {
    const schema = schemas.next();
    const backend = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema,
      poolSize: 4,
    });
    const soniq = new Soniq({ backend, logger: silent, env: {}, pollInterval: 30 });
    closers.push(() => soniq.close());
    await soniq.setup();
    // Called as another client would: schema-qualified, from a session whose search_path does not
    // name Soniq's schema.
    const call = (name: string, args = "{}", options = "{}") =>
      `SELECT "${schema}".soniq_enqueue(${lit(name)}, ${lit(args)}::jsonb, ${lit(options)}::jsonb)`;
    return { soniq, call, schema, backend };
  }

  it("enqueue › committed from psql › a running worker is woken (not by polling) and runs it with its arguments", async () => {
    const { soniq, call, backend } = await open();
    const seen: unknown[] = [];
    soniq.job({ name: "sql.echo", handler: async (args: unknown) => void seen.push(args) });
    // pollInterval is 30 s: only the insert's NOTIFY can wake the worker within the wait below.
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    closers.unshift(async () => void (await worker.stop()));
    const notifier = backend.notifier as PgNotifier;
    await waitFor(() => notifier.listening, 15_000, "the worker's LISTEN in place");
    const r = psql(call("sql.echo", '{"to":"ops","n":1}'));
    expect(r.code, r.err).toBe(0);
    const id = r.out;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    await waitFor(async () => (await soniq.jobs.get(id))?.status === "done", 10_000, "ran");
    expect(seen).toEqual([{ to: "ops", n: 1 }]);
  });

  it("waitFor › a job enqueued from psql, run later by a worker › the Node wait resolves with its result", async () => {
    const { soniq, call } = await open();
    soniq.job({ name: "sql.double", handler: async (args: { n: number }) => ({ n: args.n * 2 }) });
    const r = psql(call("sql.double", '{"n":21}'));
    expect(r.code, r.err).toBe(0);
    const result = soniq.jobs.waitFor(r.out, { timeout: 60 });
    const worker = soniq.worker({ concurrency: 1 });
    await worker.start();
    closers.unshift(async () => void (await worker.stop()));
    expect(await result).toEqual({ n: 42 });
  });

  it("enqueue › in a rolled-back transaction › the job never exists; committed, it is queued with the defaults", async () => {
    const { soniq, call } = await open();
    const rolled = psql(`BEGIN; ${call("sql.echo")}; ROLLBACK;`);
    expect(rolled.code, rolled.err).toBe(0);
    const rolledId = rolled.out.split("\n")[0] as string;
    expect(await soniq.jobs.get(rolledId)).toBeNull();
    expect((await soniq.stats()).total).toBe(0);
    const committed = psql(`BEGIN; ${call("sql.echo")}; COMMIT;`);
    expect(committed.code, committed.err).toBe(0);
    expect(await soniq.jobs.get(committed.out.split("\n")[0] as string)).toMatchObject({
      name: "sql.echo",
      queue: "default",
      status: "queued",
      priority: 0,
      maxAttempts: 5,
      attempts: 0,
    });
  });

  it("options › queue, priority, maxAttempts, delay, version, concurrency › stored as the library stores them", async () => {
    const { soniq, call, schema } = await open();
    const r = psql(
      call(
        "sql.echo",
        '{"a":[1,2]}',
        '{"queue":"mail","priority":-5,"maxAttempts":2,"delay":3600,"version":3,"concurrency":{"key":"t1","limit":2}}',
      ),
    );
    expect(r.code, r.err).toBe(0);
    const job = await soniq.jobs.get(r.out);
    expect(job).toMatchObject({
      queue: "mail",
      priority: -5,
      maxAttempts: 2,
      status: "scheduled",
      args: { a: [1, 2] },
      version: 3,
    });
    // The concurrency key as the library stores it (src/backends/shared/concurrency-meta.ts).
    const meta = psql(`SELECT meta::text FROM "${schema}".soniq_jobs WHERE id = ${lit(r.out)}`);
    expect(JSON.parse(meta.out)).toEqual({ concurrency: { key: "t1", limit: 2 } });
    const due = (job as { scheduledAt: Date }).scheduledAt.getTime() - Date.now();
    expect(due).toBeGreaterThan(3500_000);
    expect(due).toBeLessThan(3700_000);
    const at = psql(call("sql.echo", "{}", '{"runAt":"2099-01-02T03:04:05Z"}'));
    expect(at.code, at.err).toBe(0);
    expect((await soniq.jobs.get(at.out))?.scheduledAt.toISOString()).toBe(
      "2099-01-02T03:04:05.000Z",
    );
  });

  it("dedup › the same key twice, across the library, then once the hold has passed › the holder's id while held, a new job after", async () => {
    const { soniq, call, schema } = await open();
    const job = soniq.job({ name: "sql.echo", handler: async () => undefined });
    const first = psql(call("sql.echo", '{"n":1}', '{"dedupKey":"k1"}'));
    const second = psql(call("sql.echo", '{"n":2}', '{"dedupKey":"k1"}'));
    expect(first.code, first.err).toBe(0);
    expect(second.out).toBe(first.out);
    // The library sees the key held by the SQL-enqueued job, and the other way round.
    expect(await job.enqueue({ n: 3 }, { dedupKey: "k1" })).toBe(first.out);
    const lib = await job.enqueue({ n: 4 }, { dedupKey: "k2" });
    expect(psql(call("sql.echo", "{}", '{"dedupKey":"k2"}')).out).toBe(lib);
    expect((await soniq.stats()).queued).toBe(2);
    // The holder finishes (cancelled) and its hold ends (as at the end of its retention): the
    // key is free again.
    expect(await soniq.jobs.cancel(first.out)).toBe("cancelled");
    expect(psql(call("sql.echo", "{}", '{"dedupKey":"k1"}')).out).toBe(first.out);
    const ended = psql(
      `UPDATE "${schema}".soniq_dedup_keys SET held_until = now() - interval '1 second' WHERE dedup_key = 'k1'`,
    );
    expect(ended.code, ended.err).toBe(0);
    const third = psql(call("sql.echo", '{"n":5}', '{"dedupKey":"k1"}'));
    expect(third.code, third.err).toBe(0);
    expect(third.out).not.toBe(first.out);
    expect(await soniq.jobs.get(third.out)).toMatchObject({ status: "queued", args: { n: 5 } });
  });

  it("bad input › each refused with the library's code, SQLSTATE 22023, nothing written", async () => {
    const { soniq, call } = await open();
    const cases: Array<[string, string, string, string]> = [
      ["Bad Name", "{}", "{}", "INVALID_JOB_NAME"],
      ["sql.echo", "{}", '{"queue":"no spaces"}', "INVALID_ENQUEUE_OPTION"],
      ["sql.echo", "{}", '{"priority":1.5}', "INVALID_ENQUEUE_OPTION"],
      ["sql.echo", "{}", '{"priority":"high"}', "INVALID_ENQUEUE_OPTION"],
      ["sql.echo", "{}", '{"maxAttempts":0}', "INVALID_ENQUEUE_OPTION"],
      ["sql.echo", "{}", '{"delay":-1}', "INVALID_ENQUEUE_OPTION"],
      ["sql.echo", "{}", '{"delay":1,"runAt":"2099-01-01T00:00:00Z"}', "INVALID_ENQUEUE_OPTION"],
      ["sql.echo", "{}", '{"runAt":"2099-01-01 00:00"}', "INVALID_ENQUEUE_OPTION"],
      ["sql.echo", "{}", '{"runAt":"2099-02-30T00:00:00Z"}', "INVALID_ENQUEUE_OPTION"],
      ["sql.echo", "{}", '{"dedupKey":""}', "INVALID_ENQUEUE_OPTION"],
      ["sql.echo", "{}", '{"concurrency":{"key":"t"}}', "INVALID_ENQUEUE_OPTION"],
      ["sql.echo", "{}", '{"colour":"red"}', "INVALID_ENQUEUE_OPTION"],
      ["sql.echo", "{}", "[1]", "INVALID_ENQUEUE_OPTION"],
      ["sql.echo", JSON.stringify({ big: "x".repeat(1024 * 1024) }), "{}", "INVALID_PAYLOAD"],
    ];
    for (const [name, args, options, code] of cases) {
      const r = psql(call(name, args, options));
      expect(r.code, `${name} ${options}`).not.toBe(0);
      expect(r.err, `${name} ${options}`).toContain(`${code}: `);
    }
    expect(psql(call("Bad Name"), true).err).toContain("22023");
    expect((await soniq.stats()).total).toBe(0);
  });
});
