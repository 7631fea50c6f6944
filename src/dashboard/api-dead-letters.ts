/**
 * The dead-letter routes: list by reason / queue / name with cursor pages, one entry, its
 * arguments as a download, replay and delete (one, a selection, or everything matching), and the
 * NDJSON export of everything matching.
 */
import { jobValuesJson } from "../admin/json/index.js";
import {
  bodyIds,
  download,
  expectedCount,
  forbidden,
  many,
  onlyKeys,
  pageParams,
} from "./api-jobs.js";
import { YIELDING_BULK } from "./operations.js";
import { jsonText } from "./preview.js";
import { BadRequest, jsonBody, type Route } from "./route.js";
import type { DashboardDeadLetterQuery } from "./source.js";
import { jobDetail, jobSummary, shownArgs, shownError } from "./views.js";

/** The admin API's dead-letter query from URL parameters. */
export function deadLetterQuery(params: URLSearchParams): DashboardDeadLetterQuery {
  const query: DashboardDeadLetterQuery = {};
  for (const key of ["reason", "queue", "name", "id"] as const) {
    const values = many(params, key);
    if (values) query[key] = values;
  }
  for (const key of ["deadAfter", "deadBefore"] as const) {
    const value = params.get(key);
    if (value) query[key] = value;
  }
  return query;
}

/** The dead-letter filter of a bulk body's `filter`, or undefined. */
export function filterFrom(body: Record<string, unknown>): DashboardDeadLetterQuery | undefined {
  if (body.filter === undefined) return undefined;
  const f = body.filter;
  if (typeof f !== "object" || f === null || Array.isArray(f))
    throw new BadRequest("filter must be an object");
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(f)) {
    for (const v of Array.isArray(value) ? value : [value]) params.append(key, String(v));
  }
  return deadLetterQuery(params);
}

function notFound(id: string): Response {
  return Response.json(
    { error: { code: "NOT_FOUND", message: `no dead letter with id ${id}` } },
    { status: 404 },
  );
}

/** The dead-letter routes. */
export const deadLetterRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/dead-letter",
    async handle({ url, options }) {
      const page = await options.soniq.deadLetters.list(
        deadLetterQuery(url.searchParams),
        pageParams(url.searchParams),
      );
      return {
        body: {
          deadLetters: page.deadLetters.map((d) => jobSummary(options, d)),
          nextCursor: page.nextCursor,
        },
      };
    },
  },
  {
    method: "GET",
    path: "/api/dead-letter/export",
    async handle({ url, options }) {
      const query = deadLetterQuery(url.searchParams);
      const entries = options.soniq.deadLetters.export(query);
      const encoder = new TextEncoder();
      const iterator = entries[Symbol.asyncIterator]();
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await iterator.next();
          if (next.done) return controller.close();
          const entry = next.value;
          const line = jsonText(
            {
              ...jobValuesJson(entry),
              args: shownArgs(options, entry),
              lastError: shownError(options, entry.name, entry.lastError),
            },
            false,
          );
          controller.enqueue(encoder.encode(`${line}\n`));
        },
        async cancel() {
          await iterator.return?.(undefined);
        },
      });
      return new Response(stream, {
        headers: {
          "content-type": "application/x-ndjson; charset=utf-8",
          "content-disposition": 'attachment; filename="dead-letters.ndjson"',
        },
      });
    },
  },
  {
    method: "POST",
    path: "/api/dead-letter/bulk",
    async handle(ctx) {
      const body = await jsonBody(ctx.request);
      onlyKeys(body, ["action", "ids", "filter", "expectedCount"]);
      const action = body.action;
      if (action !== "replay" && action !== "delete")
        throw new BadRequest("action must be replay or delete");
      if (!ctx.actions.has(`deadLetters.${action}`)) return forbidden(`deadLetters.${action}`);
      const ids = bodyIds(body);
      const filter = filterFrom(body);
      const count = expectedCount(body);
      const request = {
        ...(ids ? { ids } : {}),
        ...(filter ? { filter } : {}),
        ...(count !== undefined ? { expectedCount: count } : {}),
        ...YIELDING_BULK,
      };
      const dl = ctx.options.soniq.deadLetters;
      const result =
        action === "replay" ? await dl.replayMany(request) : await dl.deleteMany(request);
      return {
        body: result,
        audit: {
          action: `deadLetters.bulk.${action}`,
          ids: ids ?? [],
          filter: filter ? { ...filter } : null,
          result: { ...result },
        },
      };
    },
  },
  {
    method: "GET",
    path: "/api/dead-letter/:id",
    async handle({ params, url, options }) {
      // Through jobs.get, like `soniq dlq show`: the entry with its timeline.
      const entry = await options.soniq.jobs.get(params.id as string);
      if (entry?.status !== "dead_letter") return notFound(params.id as string);
      return { body: jobDetail(options, entry, url.searchParams.get("showArgs") === "1") };
    },
  },
  {
    method: "GET",
    path: "/api/dead-letter/:id/args",
    async handle({ params, options }) {
      const entry = await options.soniq.deadLetters.get(params.id as string);
      if (!entry) return notFound(params.id as string);
      return download(shownArgs(options, entry), `dead-letter-${entry.id}-args.json`);
    },
  },
  {
    method: "POST",
    path: "/api/dead-letter/:id/replay",
    action: "deadLetters.replay",
    async handle({ params, options }) {
      await options.soniq.deadLetters.replay(params.id as string);
      return { body: { ok: true }, audit: { ids: [params.id as string] } };
    },
  },
  {
    method: "DELETE",
    path: "/api/dead-letter/:id",
    action: "deadLetters.delete",
    async handle({ params, options }) {
      await options.soniq.deadLetters.delete(params.id as string);
      return { body: { ok: true }, audit: { ids: [params.id as string] } };
    },
  },
];
