/**
 * The jobs routes: list with the admin API's filters and cursor pages, one job with its timeline,
 * value downloads, cancel / retry / delete, resolving a frozen step and clearing a checkpoint
 * (docs/checkpoints.md), and bulk actions on a selection or on everything that
 * matches (`expectedCount` guards the latter).
 */
import type { z } from "zod";
import type { jobActionJsonSchema } from "../admin/json/index.js";
import { SoniqError } from "../errors.js";
import type { cancelStateJsonSchema, jobCountJsonSchema } from "./meta-json.js";
import { YIELDING_BULK } from "./operations.js";
import { jsonText } from "./preview.js";
import { withRemotePhases } from "./remote-timeline.js";
import { BadRequest, jsonBody, type Route } from "./route.js";
import type { DashboardJobQuery } from "./source.js";
import { jobDetail, jobSummary, shownArgs, shownResult } from "./views.js";

/** Values of a repeatable parameter: `?status=a&status=b` or `?status=a,b`. */
export function many(params: URLSearchParams, key: string): string[] | undefined {
  const values = params
    .getAll(key)
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter((v) => v !== "");
  return values.length > 0 ? values : undefined;
}

/** Page options from `?cursor=&limit=`. */
export function pageParams(params: URLSearchParams): { cursor: string | null; limit: number } {
  const raw = params.get("limit");
  const limit = raw === null || raw === "" ? 50 : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new BadRequest("limit: 1–500");
  return { cursor: params.get("cursor") || null, limit };
}

/** The admin API's job query from the URL (or a bulk body's `filter`, given as the same keys). */
export function jobQuery(params: URLSearchParams): DashboardJobQuery {
  const query: DashboardJobQuery = {};
  const status = many(params, "status");
  if (status) query.status = status as DashboardJobQuery["status"];
  const queue = many(params, "queue");
  if (queue) query.queue = queue;
  const name = many(params, "name");
  if (name) query.name = name;
  const id = many(params, "id");
  if (id) query.id = id;
  for (const key of [
    "dedupKey",
    "error",
    "createdAfter",
    "createdBefore",
    "finishedAfter",
    "finishedBefore",
  ] as const) {
    const value = params.get(key);
    if (value) query[key] = value;
  }
  for (const [key, value] of params) {
    if (key.startsWith("args.") && key.length > 5) {
      if (query.args) throw new BadRequest("one args.<path> filter at a time");
      query.args = { path: key.slice(5), equals: value };
    }
  }
  return query;
}

/** A filter object from a JSON body, read through the same rules as the URL. */
export function filterParams(filter: unknown): URLSearchParams {
  if (typeof filter !== "object" || filter === null || Array.isArray(filter)) {
    throw new BadRequest("filter must be an object of the list's query parameters");
  }
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filter)) {
    for (const v of Array.isArray(value) ? value : [value]) params.append(key, String(v));
  }
  return params;
}

/**
 * Refuses a bulk body key outside `known` (a misspelt `expectedCount` would drop the guard it
 * meant), as the admin API refuses unknown bulk request keys.
 * @throws SoniqError `INVALID_OPTION` (400) naming the key in `details.option`.
 */
export function onlyKeys(body: Record<string, unknown>, known: readonly string[]): void {
  const unknown = Object.keys(body).find((key) => !known.includes(key));
  if (unknown !== undefined) {
    throw new SoniqError(
      "INVALID_OPTION",
      `${JSON.stringify(unknown)} is not a field of this request (known: ${known.join(", ")})`,
      { details: { option: unknown } },
    );
  }
}

/** Ids from a JSON body (`ids: string[]`), or undefined. */
export function bodyIds(body: Record<string, unknown>): string[] | undefined {
  if (body.ids === undefined) return undefined;
  if (!Array.isArray(body.ids) || !body.ids.every((id) => typeof id === "string")) {
    throw new BadRequest("ids must be an array of strings");
  }
  if (body.ids.length > 10_000) throw new BadRequest("at most 10000 ids; use filter");
  return body.ids as string[];
}

/** `expectedCount` from a JSON body, or undefined. */
export function expectedCount(body: Record<string, unknown>): number | undefined {
  const n = body.expectedCount;
  if (n === undefined) return undefined;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0) {
    throw new BadRequest("expectedCount must be a whole number");
  }
  return n;
}

/** A JSON download of a value, as an attachment. */
export function download(value: unknown, filename: string): Response {
  return new Response(jsonText(value, false), {
    headers: {
      "content-type": "application/json; charset=utf-8",
      "content-disposition": `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, "_")}"`,
    },
  });
}

function notFound(id: string): Response {
  return Response.json(
    { error: { code: "NOT_FOUND", message: `no job with id ${id}` } },
    { status: 404 },
  );
}

/** The jobs routes. */
export const jobRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/jobs",
    async handle({ url, options }) {
      const page = await options.soniq.jobs.list(
        jobQuery(url.searchParams),
        pageParams(url.searchParams),
      );
      return {
        body: { jobs: page.jobs.map((j) => jobSummary(options, j)), nextCursor: page.nextCursor },
      };
    },
  },
  {
    method: "GET",
    path: "/api/jobs/count",
    async handle({ url, options }) {
      const count = await options.soniq.jobs.count(jobQuery(url.searchParams));
      return { body: { count } satisfies z.infer<typeof jobCountJsonSchema> };
    },
  },
  {
    method: "POST",
    path: "/api/jobs/bulk",
    async handle(ctx) {
      const body = await jsonBody(ctx.request);
      onlyKeys(body, ["action", "ids", "filter", "expectedCount"]);
      const action = body.action;
      if (action !== "cancel" && action !== "retry" && action !== "delete") {
        throw new BadRequest("action must be cancel, retry or delete");
      }
      if (!ctx.actions.has(`jobs.${action}`)) return forbidden(`jobs.${action}`);
      const ids = bodyIds(body);
      const filter = body.filter === undefined ? undefined : jobQuery(filterParams(body.filter));
      const result = await ctx.options.soniq.jobs.bulk({
        action,
        ...(ids ? { ids } : {}),
        ...(filter ? { filter } : {}),
        ...(expectedCount(body) !== undefined ? { expectedCount: expectedCount(body) } : {}),
        ...YIELDING_BULK,
      });
      return {
        body: result,
        audit: {
          action: `jobs.bulk.${action}`,
          ids: ids ?? [],
          filter: filter ? { ...filter } : null,
          result: { ...result },
        },
      };
    },
  },
  {
    method: "GET",
    path: "/api/jobs/:id",
    async handle({ params, url, options }) {
      const job = await options.soniq.jobs.get(params.id as string);
      if (!job) return notFound(params.id as string);
      const shown = await withRemotePhases(options.soniq, job);
      return { body: jobDetail(options, shown, url.searchParams.get("showArgs") === "1") };
    },
  },
  {
    method: "GET",
    path: "/api/jobs/:id/args",
    async handle({ params, options }) {
      const job = await options.soniq.jobs.get(params.id as string);
      if (!job) return notFound(params.id as string);
      return download(shownArgs(options, job), `job-${job.id}-args.json`);
    },
  },
  {
    method: "GET",
    path: "/api/jobs/:id/result",
    async handle({ params, options }) {
      const job = await options.soniq.jobs.get(params.id as string);
      if (!job) return notFound(params.id as string);
      return download(shownResult(options, job), `job-${job.id}-result.json`);
    },
  },
  {
    method: "POST",
    path: "/api/jobs/:id/cancel",
    action: "jobs.cancel",
    async handle({ params, options }) {
      const state = await options.soniq.jobs.cancel(params.id as string);
      return {
        body: { state } satisfies z.infer<typeof cancelStateJsonSchema>,
        audit: { ids: [params.id as string], result: { state } },
      };
    },
  },
  {
    method: "POST",
    path: "/api/jobs/:id/retry",
    action: "jobs.retry",
    async handle({ params, options }) {
      await options.soniq.jobs.retry(params.id as string);
      return { body: { ok: true }, audit: { ids: [params.id as string] } };
    },
  },
  {
    method: "POST",
    path: "/api/jobs/:id/resolve-step",
    action: "jobs.resolveStep",
    async handle({ params, options, request }) {
      const body = await jsonBody(request);
      onlyKeys(body, ["step", "answer", "result"]);
      const id = params.id as string;
      if (typeof body.step !== "string" || body.step === "") {
        throw new BadRequest("step must be the step's name (text)");
      }
      let answer: { done: unknown } | { rerun: true };
      if (body.answer === "done") answer = { done: body.result };
      else if (body.answer === "rerun") {
        if (body.result !== undefined) throw new BadRequest("result goes with answer done only");
        answer = { rerun: true };
      } else throw new BadRequest('answer must be "done" or "rerun"');
      await options.soniq.jobs.resolveStep(id, body.step, answer);
      return {
        body: { id, state: "queued" } satisfies z.infer<typeof jobActionJsonSchema>,
        audit: { ids: [id], result: { step: body.step, answer: body.answer } },
      };
    },
  },
  {
    method: "POST",
    path: "/api/jobs/:id/clear-checkpoint",
    action: "jobs.clearCheckpoint",
    async handle({ params, options }) {
      const id = params.id as string;
      await options.soniq.jobs.clearCheckpoint(id);
      return {
        body: { id, state: "queued" } satisfies z.infer<typeof jobActionJsonSchema>,
        audit: { ids: [id] },
      };
    },
  },
  {
    method: "DELETE",
    path: "/api/jobs/:id",
    action: "jobs.delete",
    async handle({ params, options }) {
      await options.soniq.jobs.delete(params.id as string);
      return { body: { ok: true }, audit: { ids: [params.id as string] } };
    },
  },
];

/** A 403 for a write the user's access does not grant. */
export function forbidden(action: string): Response {
  return Response.json(
    { error: { code: "FORBIDDEN", message: `your access does not grant ${action}` } },
    { status: 403 },
  );
}
