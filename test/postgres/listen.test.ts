// Wake-ups on PostgreSQL: the dedicated LISTEN connection re-connects after being killed, the
// channel is per schema, NACK / immediate retry / replay NOTIFY too, and a backend's own writes
// wake its own process once (directly, not by its own NOTIFY).
import pg from "pg";
import { pino } from "pino";
import { afterEach, expect, it, vi } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { Soniq } from "../../src/index.js";
import { newJob } from "../contract/helpers.js";
import { waitForEvent } from "../helpers/events.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Backend pids of the connections whose last statement LISTENed on `channel`. */
function listenerPids(channel: string): Promise<number[]> {
  return admin(async (c) => {
    const { rows } = await c.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE query = $1",
      [`LISTEN "${channel}"`],
    );
    return rows.map((r) => r.pid);
  });
}

/** Enqueues into `queue` every 200 ms until `woke` holds it (bounded by `ms`). */
async function enqueueUntilWoken(b: PostgresBackend, queue: string, woke: string[], ms: number) {
  const deadline = Date.now() + ms;
  while (!woke.includes(queue)) {
    if (Date.now() > deadline) throw new Error(`no wake-up for ${queue} within ${ms} ms`);
    await b.jobEnqueue({ jobs: [newJob({ queue })] });
    await new Promise((r) => setTimeout(r, 200));
  }
}

describePostgres("postgres: LISTEN/NOTIFY", () => {
  const schemas = usePostgresSchemas();
  const backends: PostgresBackend[] = [];

  afterEach(async () => {
    for (const b of backends.splice(0)) await b.close().catch(() => undefined);
  });

  async function open(schema = schemas.next()): Promise<PostgresBackend> {
    schemas.adopt(schema);
    const errors: unknown[] = [];
    const b = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema,
      poolSize: 2,
      onError: (err) => errors.push(err),
    });
    backends.push(b);
    await b.setup();
    return b;
  }

  // A backend wakes its own process's subscribers directly after its own writes; the tests of
  // the LISTEN side therefore write through a second backend (its own pool), which stands for
  // another process.

  it("survives a terminated LISTEN connection", async () => {
    const schema = schemas.next();
    const b = await open(schema);
    const writer = await open(schema);
    const woke: string[] = [];
    b.notifier.subscribe((queue) => woke.push(queue));
    await enqueueUntilWoken(writer, "before", woke, 10_000);

    const [pid] = await listenerPids(b.channel);
    expect(pid).toBeTypeOf("number");
    await admin((c) => c.query("SELECT pg_terminate_backend($1)", [pid]));
    woke.length = 0;

    await enqueueUntilWoken(writer, "after", woke, 15_000);
    expect(woke).toContain("*"); // re-connected: "may have missed some"
    const pids = await listenerPids(b.channel);
    expect(pids).toHaveLength(1);
    expect(pids[0]).not.toBe(pid);
  }, 30_000);

  it("LISTEN connection › terminated › logged and emitted as lost, then as restored", async () => {
    const schema = schemas.next();
    schemas.adopt(schema);
    const lines: string[] = [];
    const soniq = new Soniq({
      databaseUrl: TEST_DATABASE_URL,
      schema,
      env: {},
      logger: pino({ level: "info" }, {
        write: (line: string) => void lines.push(line),
      } as unknown as pino.DestinationStream),
    });
    try {
      await soniq.setup();
      const b = (await soniq.backend()) as PostgresBackend;
      b.notifier.subscribe(() => undefined);
      await vi.waitFor(async () => expect(await listenerPids(b.channel)).toHaveLength(1), {
        timeout: 10_000,
      });
      const lost = waitForEvent(soniq, "listen_connection_lost", undefined, 10_000);
      const restored = waitForEvent(soniq, "listen_connection_restored", undefined, 15_000);
      const [pid] = await listenerPids(b.channel);
      await admin((c) => c.query("SELECT pg_terminate_backend($1)", [pid]));
      expect(await lost).toMatchObject({ channel: b.channel });
      expect(await restored).toEqual({ channel: b.channel });
      expect(lines.some((l) => l.includes("LISTEN connection lost"))).toBe(true);
      expect(lines.some((l) => l.includes("LISTEN connection re-established"))).toBe(true);
    } finally {
      await soniq.close();
    }
  }, 30_000);

  it("keeps schemas apart and handles 63-character schema names", async () => {
    const long = `soniq_t_${"x".repeat(42)}_${Math.random().toString(16).slice(2, 14).padEnd(12, "0")}`;
    expect(long).toHaveLength(63);
    const a = await open(long);
    const other = await open();
    const writerA = await open(long);
    const writerOther = await open(other.schema);
    expect(a.channel.length).toBeLessThanOrEqual(63);
    const wokeA: string[] = [];
    const wokeOther: string[] = [];
    a.notifier.subscribe((q) => wokeA.push(q));
    other.notifier.subscribe((q) => wokeOther.push(q));
    await enqueueUntilWoken(writerA, "long", wokeA, 10_000);
    await enqueueUntilWoken(writerOther, "short", wokeOther, 10_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(wokeOther).not.toContain("long");
    expect(wokeA).not.toContain("short");
  });

  it("NACK, immediate retry and replay wake another process's queue; delayed inserts do not", async () => {
    const schema = schemas.next();
    const b = await open(schema);
    // A second backend with its own pool and LISTEN connection stands for another process: it
    // learns of b's writes only through NOTIFY.
    const other = await open(schema);
    const woke: string[] = [];
    other.notifier.subscribe((q) => woke.push(q));
    await enqueueUntilWoken(b, "probe", woke, 10_000);

    await b.jobEnqueue({ jobs: [newJob({ queue: "later", delaySeconds: 3600 })] });
    const job = newJob({ queue: "again" });
    await b.jobEnqueue({ jobs: [job] });
    await expect.poll(() => woke.includes("again")).toBe(true);

    const steps: Array<(owner: { workerId: string; claimToken: string }) => Promise<boolean>> = [
      (o) => b.jobNack({ id: job.id, owner: o }),
      (o) => b.jobRetry({ id: job.id, owner: o, error: "boom", delaySeconds: 0 }),
      (o) => b.jobSnooze({ id: job.id, owner: o, delaySeconds: 0 }),
      async (o) =>
        (await b.jobDeadLetter({
          id: job.id,
          owner: o,
          error: "x",
          reason: "r",
          countAttempt: true,
        })) && b.deadLetterReplay({ id: job.id }),
    ];
    for (const step of steps) {
      const [c] = await b.jobClaim({ workerId: "w", queues: ["again"], limit: 1 });
      if (!c) throw new Error("nothing to claim");
      woke.length = 0;
      expect(await step({ workerId: "w", claimToken: c.claimToken })).toBe(true);
      await expect.poll(() => woke.includes("again")).toBe(true);
    }
    expect(woke).not.toContain("later");
  });

  it("a NOTIFY sent before the LISTEN › every queue woken once LISTEN is in place, with no write", async () => {
    const schema = schemas.next();
    const b = await open(schema);
    const woke: string[] = [];
    const at = Date.now();
    b.notifier.subscribe((q) => woke.push(q));
    // Nothing is written: the only wake-up is the one that says "look, you may have missed one".
    await expect.poll(() => woke, { timeout: 10_000 }).toEqual(["*"]);
    expect(await listenerPids(b.channel)).toHaveLength(1);
    expect(Date.now() - at).toBeLessThan(10_000);
  });

  it("wakes its own process once per write, without waiting for its own NOTIFY", async () => {
    const schema = schemas.next();
    const b = await open(schema);
    const other = await open(schema);
    const mine: string[] = [];
    const theirs: string[] = [];
    b.notifier.subscribe((q) => mine.push(q));
    other.notifier.subscribe((q) => theirs.push(q));
    await enqueueUntilWoken(b, "probe", theirs, 10_000);
    // Both LISTEN connections are up: each woke its subscribers with "*" when it was.
    await expect
      .poll(() => mine.includes("*") && theirs.includes("*"), { timeout: 10_000 })
      .toBe(true);
    mine.length = 0;
    theirs.length = 0;

    await b.jobEnqueue({ jobs: [newJob({ queue: "one" }), newJob({ queue: "one" })] });
    // Woken before enqueue() resolved (a microtask), not by the NOTIFY that follows.
    await new Promise((r) => setImmediate(r));
    expect(mine).toEqual(["one"]);
    await expect.poll(() => theirs.includes("one")).toBe(true);
    // Its own NOTIFY arrived by now too (the other backend got it) and was not a second wake-up.
    await new Promise((r) => setTimeout(r, 200));
    expect(mine).toEqual(["one"]);

    const [c] = await b.jobClaim({ workerId: "w", queues: ["one"], limit: 1 });
    if (!c) throw new Error("nothing to claim");
    mine.length = 0;
    expect(await b.jobNack({ id: c.id, owner: { workerId: "w", claimToken: c.claimToken } })).toBe(
      true,
    );
    expect(mine).toEqual(["one"]);
    await new Promise((r) => setTimeout(r, 200));
    expect(mine).toEqual(["one"]);

    // Due by the database's clock decides, not this process's: with the local clock 3 s behind,
    // a job due a second ago (database time) still wakes this process at once.
    mine.length = 0;
    const dbNow = (await b.now()).getTime();
    const clock = vi.spyOn(Date, "now").mockReturnValue(dbNow - 3000);
    try {
      await b.jobEnqueue({ jobs: [newJob({ queue: "skewed", runAt: new Date(dbNow - 1000) })] });
    } finally {
      clock.mockRestore();
    }
    await new Promise((r) => setImmediate(r));
    expect(mine).toEqual(["skewed"]);

    // Not due for an hour: no wake-up anywhere.
    mine.length = 0;
    theirs.length = 0;
    await b.jobEnqueue({ jobs: [newJob({ queue: "later", delaySeconds: 3600 })] });
    await new Promise((r) => setTimeout(r, 200));
    expect([...mine, ...theirs]).not.toContain("later");
  });
});
