/**
 * The live bulk routes: `POST /api/operations` starts a bulk action on jobs (cancel, retry,
 * delete) or dead letters (replay, delete) over a selection or everything matching, and answers
 * 202 once the matching rows are counted (409 `COUNT_MISMATCH` before anything changes when
 * `expectedCount` differs); `GET /api/operations/:id` gives its running totals. The grant checked
 * is the action's own (`jobs.cancel`, `deadLetters.replay`, …); the start is audited once.
 */
import { filterFrom } from "./api-dead-letters.js";
import { bodyIds, expectedCount, filterParams, forbidden, jobQuery, onlyKeys } from "./api-jobs.js";
import { type BulkRun, OPERATION_BATCH_SIZE } from "./operations.js";
import { BadRequest, jsonBody, type Route } from "./route.js";

const ACTIONS = {
  jobs: ["cancel", "retry", "delete"],
  "dead-letter": ["replay", "delete"],
} as const;

/** The live bulk routes. */
export const operationRoutes: Route[] = [
  {
    method: "POST",
    path: "/api/operations",
    async handle(ctx) {
      const body = await jsonBody(ctx.request);
      onlyKeys(body, ["target", "action", "ids", "filter", "expectedCount"]);
      const target = body.target;
      if (target !== "jobs" && target !== "dead-letter") {
        throw new BadRequest('target must be "jobs" or "dead-letter"');
      }
      const action = body.action;
      if (typeof action !== "string" || !(ACTIONS[target] as readonly string[]).includes(action)) {
        throw new BadRequest(`action must be one of ${ACTIONS[target].join(", ")}`);
      }
      const grant =
        target === "jobs" ? (`jobs.${action}` as const) : (`deadLetters.${action}` as const);
      if (!ctx.actions.has(grant as never)) return forbidden(grant);
      const ids = bodyIds(body);
      const count = expectedCount(body);
      const soniq = ctx.options.soniq;
      const common = {
        ...(ids ? { ids } : {}),
        ...(count !== undefined ? { expectedCount: count } : {}),
        batchSize: OPERATION_BATCH_SIZE,
      };
      const audited = `${target === "jobs" ? "jobs" : "deadLetters"}.bulk.${action}`;
      let filter: Record<string, unknown> | undefined;
      let run: BulkRun;
      if (target === "jobs") {
        const query = body.filter === undefined ? undefined : jobQuery(filterParams(body.filter));
        filter = query ? { ...query } : undefined;
        run = (onProgress) =>
          soniq.jobs.bulk({
            action: action as "cancel" | "retry" | "delete",
            ...(query ? { filter: query } : {}),
            ...common,
            onProgress,
          });
      } else {
        const query = filterFrom(body);
        filter = query ? { ...query } : undefined;
        const request = { ...(query ? { filter: query } : {}), ...common };
        run = (onProgress) =>
          action === "replay"
            ? soniq.deadLetters.replayMany({ ...request, onProgress })
            : soniq.deadLetters.deleteMany({ ...request, onProgress });
      }
      const operation = await ctx.operations.start(audited, ctx.user.name, run);
      return {
        status: 202,
        body: { operation },
        audit: {
          action: audited,
          ids: ids ?? [],
          filter: filter ?? null,
          result: { operation: operation.id, matched: operation.matched },
        },
      };
    },
  },
  {
    method: "GET",
    path: "/api/operations/:id",
    async handle({ params, operations }) {
      const operation = operations.get(params.id as string);
      if (!operation) {
        return Response.json(
          { error: { code: "NOT_FOUND", message: `no operation with id ${params.id}` } },
          { status: 404 },
        );
      }
      return { body: { operation } };
    },
  },
];
