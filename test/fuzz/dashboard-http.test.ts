/**
 * Fuzz of the dashboard's HTTP API (issue 26 item 2) on a SQLite file and on PostgreSQL: the
 * handler served in-process on an ephemeral loopback port, signed in as a user with every action
 * (cookie + CSRF header, as test/helpers/dashboard.ts does), and asked every route of `ROUTES` with
 * arbitrary path parameters (real ids, hostile text, raw percent-escapes), query strings (known
 * filter keys and anything) and bodies (JSON objects with the fields the writes take, any JSON,
 * text that is not JSON, huge and deep values), plus arbitrary paths. The oracle: every answer
 * comes within {@link REQUEST_BOUND_MS}, is never 5xx, and a 4xx is JSON `{ error: { code } }`
 * with an upper-case code; a refused request (4xx) changes no row (jobs with their status and
 * attempts, dead letters, queues, schedules compared before and after). A bulk operation a
 * request started (202) is waited for before the next case. Each request has its own connection:
 * when the server answers before reading a large body (a 404 route, a refused write), Node resets
 * that keep-alive socket, and a client reusing it would fail the next, unrelated case. Fixed seed
 * (test/helpers/fuzz.ts); `FUZZ_SEED` / `FUZZ_RUNS` explore further.
 */
import fc from "fast-check";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ROUTES } from "../../src/dashboard/handler.js";
import { createDashboard } from "../../src/dashboard/index.js";
import type { Soniq } from "../../src/index.js";
import { type Seeded, seed, seededInstance } from "../dashboard/seed.js";
import { describeEachBackend } from "../helpers/backend-targets.js";
import { type Served, serve } from "../helpers/dashboard.js";
import { anyNumber, anyText, fuzzParameters, mostly, optionsOf } from "../helpers/fuzz.js";
import { waitFor } from "../helpers/wait.js";

/**
 * The longest one request may take, in milliseconds. An answer takes milliseconds; a body of a
 * megabyte or a bulk action over the seed takes well under a second here. 15 s still fails a hang.
 */
const REQUEST_BOUND_MS = 15_000;

/** Query keys the routes read (filters, paging, history, schedules), or anything. */
const QUERY_KEYS = [
  "status",
  "queue",
  "name",
  "id",
  "dedupKey",
  "error",
  "args.user.id",
  "args.",
  "createdAfter",
  "createdBefore",
  "finishedAfter",
  "finishedBefore",
  "reason",
  "deadAfter",
  "deadBefore",
  "cursor",
  "limit",
  "windowSeconds",
  "phase",
  "next",
  "runs",
  "full",
];

/** Text safe to put in a URL: encoded (lone surrogates become U+FFFD), or a raw escape. */
function pathPiece(text: string): string {
  return encodeURIComponent(text.toWellFormed());
}

const queryString = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...QUERY_KEYS), anyText),
      fc.oneof(anyText, anyNumber.map(String)),
    ),
    { maxLength: 5 },
  )
  .map((pairs) => {
    const params = new URLSearchParams();
    for (const [k, v] of pairs) params.append(k.toWellFormed(), v.toWellFormed());
    const text = params.toString();
    return text === "" ? "" : `?${text}`;
  });

const smallJson = fc.jsonValue({ maxDepth: 3 });
const ids = (real: () => string[]) =>
  fc.array(
    fc.oneof(
      fc.constant(null).map(() => real()[0] ?? ""),
      anyText,
    ),
    { maxLength: 4 },
  );

/** Bodies: objects with the fields the writes take, any JSON, or text that is not JSON. */
function bodies(real: () => string[]): fc.Arbitrary<string | undefined> {
  const object = optionsOf({
    action: mostly(fc.constantFrom("cancel", "retry", "delete", "replay")),
    target: mostly(fc.constantFrom("jobs", "dead-letter")),
    ids: mostly(ids(real)),
    filter: mostly(
      fc.dictionary(
        fc.oneof(fc.constantFrom(...QUERY_KEYS), anyText),
        fc.oneof(anyText, fc.array(anyText, { maxLength: 3 })),
        { maxKeys: 3 },
      ),
    ),
    expectedCount: mostly(fc.integer({ min: -1, max: 10 })),
    maxRunning: mostly(fc.oneof(fc.integer({ min: -5, max: 2000 }), fc.constant(null))),
    paused: mostly(fc.boolean()),
    outcome: mostly(fc.constantFrom("done", "failed", "dead")),
    result: smallJson,
    error: anyText,
  });
  return fc.oneof(
    { weight: 6, arbitrary: object.map(jsonText) },
    { weight: 2, arbitrary: smallJson.map(jsonText) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom("{", "", "null", "[]", '{"a":1}x', "\u0000", '"text"'),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 1000, max: 6000 })
        .map((n) => `${"[".repeat(n)}${"]".repeat(n)}`),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 1, max: 1_500_000 })
        .map((n) => JSON.stringify({ action: "cancel", ids: ["x".repeat(n)] })),
    },
  );
}

/** JSON text of a value the arbitraries made (a value JSON cannot hold becomes `null`). */
function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "null";
  } catch {
    return "null";
  }
}

describeEachBackend("dashboard HTTP fuzz", (target) => {
  let soniq: Soniq;
  let seeded: Seeded;
  let served: Served;
  // Per property and backend: the file stays under 30 s on the loaded 2-core machine.
  const runs = 80;

  beforeAll(async () => {
    // Its own instance on a fresh store (target.open()'s stores are closed after each test).
    const address = target.freshAddress();
    soniq = seededInstance(
      {
        databaseUrl: address.databaseUrl,
        ...(address.schema ? { schema: address.schema } : {}),
        // The server's own log of a failed request, named in the assertion that fails on it.
        logger: pino(
          { level: "error" },
          { write: (line: string) => void serverErrors.push(line.slice(0, 2000)) },
        ),
      },
      1024,
    );
    seeded = await seed(soniq);
    served = await serve(
      "fetch",
      createDashboard({
        soniq,
        auth: (req) =>
          req.headers.get("authorization") === "Bearer fuzz-admin" ? { name: "fuzz" } : null,
        access: () => "all",
      }),
    );
    const me = await fetch(`${served.root}api/me`, {
      headers: { authorization: "Bearer fuzz-admin" },
    });
    token = ((await me.json()) as { csrfToken: string }).csrfToken;
    cookie = (me.headers.getSetCookie().find((c) => c.startsWith("soniq_csrf=")) ?? "").split(
      ";",
    )[0] as string;
  }, 60_000);
  afterAll(async () => {
    await served?.close();
    await soniq?.close();
  });

  /** Ids that exist now (jobs and dead letters), for path parameters and bodies. */
  let known: string[] = [];
  const real = () => known;

  async function snapshot(): Promise<string> {
    const [jobs, dead, queues, schedules] = await Promise.all([
      soniq.jobs.list({}, { limit: 1000 }),
      soniq.deadLetters.list({}, { limit: 1000 }),
      soniq.queues.list(),
      soniq.schedules.list(),
    ]);
    known = [
      seeded.queued,
      seeded.done,
      seeded.dead,
      ...jobs.jobs.map((j) => j.id),
      ...dead.deadLetters.map((d) => d.id),
    ];
    return JSON.stringify({
      jobs: jobs.jobs.map((j) => [j.id, j.status, j.attempts]).sort(),
      dead: dead.deadLetters.map((d) => d.id).sort(),
      queues: queues.map((q) => [q.name, q.paused, q.maxRunning]),
      schedules: schedules.map((s) => [s.id, s.paused, s.nextRunAt]),
    });
  }

  /** The session: its CSRF cookie and token (GET api/me sets them, as the page does). */
  let cookie = "";
  let token = "";

  /** One request as the signed-in page sends it, bounded by {@link REQUEST_BOUND_MS}. */
  function send(method: string, path: string, body: string | undefined): Promise<Response> {
    // A string URL under the root: a path that starts with "//" stays on this host.
    return fetch(`${served.root}${path}`, {
      method,
      headers: {
        authorization: "Bearer fuzz-admin",
        // One connection per request (see the module comment).
        connection: "close",
        cookie,
        "x-soniq-csrf": token,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body }),
      redirect: "manual",
      signal: AbortSignal.timeout(REQUEST_BOUND_MS),
    });
  }

  /** What the server logged as errors (the last one is named when a 5xx fails a case). */
  const serverErrors: string[] = [];

  /** The previous request (named when the next one fails). */
  let previous = "";

  /** Sends one request; checks the oracle; waits for a bulk operation it started. */
  async function check(method: string, path: string, body: string | undefined): Promise<void> {
    const before = await snapshot();
    const t0 = Date.now();
    let response: Response;
    let text: string;
    try {
      response = await send(method, path, body);
      text = await response.text();
    } catch (err) {
      const cause = (err as { cause?: unknown }).cause;
      throw new Error(
        `${method} ${path}: no answer within ${REQUEST_BOUND_MS} ms (${err}; ${cause}); previous: ${previous}`,
      );
    }
    previous = `${method} ${path} ${body?.slice(0, 100) ?? ""} (${body?.length ?? 0} chars) → ${response.status}`;
    const where = `${method} ${path} ${body?.slice(0, 200) ?? ""} → ${response.status} ${text.slice(0, 300)}`;
    expect(Date.now() - t0, where).toBeLessThan(REQUEST_BOUND_MS);
    expect(response.status, `${where}\nserver log: ${serverErrors.at(-1) ?? "-"}`).toBeLessThan(
      500,
    );
    if (response.status >= 400) {
      const parsed = JSON.parse(text) as { error?: { code?: unknown } };
      expect(parsed.error?.code, where).toMatch(/^[A-Z_]+$/);
      expect(await snapshot(), where).toBe(before);
    }
    if (response.status === 202) {
      const id = (JSON.parse(text) as { operation: { id: string } }).operation.id;
      await waitFor(
        async () => {
          const r = await send("GET", `api/operations/${id}`, undefined);
          return ((await r.json()) as { operation?: { finished?: boolean } }).operation?.finished;
        },
        REQUEST_BOUND_MS,
        `operation ${id}`,
      );
    }
  }

  const route = fc.constantFrom(...ROUTES.map((r) => ({ method: r.method, path: r.path })));
  const param = fc.oneof(
    { weight: 3, arbitrary: fc.constant(null).map(() => pathPiece(real()[0] ?? "x")) },
    {
      weight: 1,
      arbitrary: fc.nat(20).map((i) => pathPiece(real()[i % (real().length || 1)] ?? "x")),
    },
    { weight: 3, arbitrary: anyText.filter((t) => t.length > 0).map(pathPiece) },
    { weight: 1, arbitrary: fc.constantFrom("%ZZ", "%", "%00", "..", "%2F", "a%2Fb", "default") },
  );

  it("every route: any path parameters, query strings and bodies → 2xx or a coded 4xx, bounded; a refusal changes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        route,
        fc.array(param, { minLength: 2, maxLength: 2 }),
        queryString,
        bodies(real),
        async (r, params, query, body) => {
          let n = 0;
          const path = r.path
            .slice(1)
            .replace(/:[a-z]+/g, () => params[n++ % params.length] as string);
          await check(r.method, `${path}${query}`, r.method === "GET" ? undefined : body);
        },
      ),
      fuzzParameters(runs),
    );
  }, 120_000);

  it("regressions: each request the fuzz found answering 500, and bulk bodies with an unknown field", async () => {
    // The seed's arguments hold a lone surrogate: every `args.` filter failed on PostgreSQL.
    for (const path of ["api/jobs?args.user.id=", "api/jobs/count?args.nul=a"]) {
      expect((await send("GET", path, undefined)).status, path).toBe(200);
    }
    for (const [path, body] of [
      ["api/jobs/bulk", { action: "cancel", filter: {}, expectedcount: 0 }],
      ["api/dead-letter/bulk", { action: "delete", filter: {}, dryRun: true }],
      ["api/operations", { target: "jobs", action: "cancel", filter: {}, force: true }],
    ] as const) {
      const before = await snapshot();
      const response = await send("POST", path, JSON.stringify(body));
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        "INVALID_OPTION",
      );
      expect(await snapshot(), path).toBe(before);
    }
  });

  it("any method and path under the dashboard → never 5xx, a coded 4xx for what it does not serve", async () => {
    const method = fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");
    const segments = fc.array(
      fc.oneof(fc.constantFrom("api", "jobs", "dead-letter", "queues", "static", "bulk"), param),
      { maxLength: 4 },
    );
    await fc.assert(
      fc.asyncProperty(method, segments, queryString, async (m, parts, query) => {
        await check(m, `${parts.join("/")}${query}`, m === "GET" ? undefined : "{}");
      }),
      fuzzParameters(runs),
    );
  }, 120_000);
});
