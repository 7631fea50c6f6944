/**
 * The workflow routes (docs/workflows.md): a flow with every job and its state, a batch with its
 * counts, callbacks and members — the documents `soniq flows show --json` / `soniq batches show
 * --json` print (admin/json/workflow.ts) — which flow or batch a job belongs to, for the job
 * page's link, and the two cancels (`flows.cancel`, `batches.cancel` grants): every unfinished
 * job of a flow, every unfinished member of a batch (sealing it), as `soniq flows cancel` and
 * `soniq batches cancel` do. A batch's id given to a flow route (or a flow's to a batch route)
 * answers 404 `NOT_FOUND` with a hint naming the right route.
 */

import type { z } from "zod";
import {
  type batchCancelJsonSchema,
  batchJson,
  type flowCancelJsonSchema,
  flowJson,
} from "../admin/json/index.js";
import { isSoniqError } from "../errors.js";
import type { jobWorkflowJsonSchema } from "./openapi-schemas.js";
import type { Route } from "./route.js";
import type { DashboardSource } from "./source.js";

/**
 * 404 for `id` on a `what` route; when `id` is the other kind's (a batch's id on a flow route, a
 * flow's on a batch route), the message says which route serves it.
 */
async function notFound(
  soniq: DashboardSource,
  what: "flow" | "batch",
  id: string,
): Promise<Response> {
  let message = `no ${what} with id ${id}`;
  if (what === "flow" && (await soniq.flows.isBatch(id))) {
    message = `${id} is a batch's id, not a flow's: see api/batches/${id}`;
  } else if (what === "batch" && (await soniq.flows.get(id)) !== null) {
    message = `${id} is a flow's id, not a batch's: see api/flows/${id}`;
  }
  return Response.json({ error: { code: "NOT_FOUND", message } }, { status: 404 });
}

/** The workflow routes. */
export const workflowRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/flows/:id",
    async handle({ params, options }) {
      const view = await options.soniq.flows.get(params.id as string);
      if (!view) return notFound(options.soniq, "flow", params.id as string);
      return { body: flowJson(view) };
    },
  },
  {
    method: "POST",
    path: "/api/flows/:id/cancel",
    action: "flows.cancel",
    async handle({ params, options }) {
      const id = params.id as string;
      let done: Awaited<ReturnType<typeof options.soniq.flows.cancel>>;
      try {
        done = await options.soniq.flows.cancel(id);
      } catch (err) {
        // Unknown, or a batch's id (refused, nothing cancelled): the 404 that names the route.
        if (isSoniqError(err, "NOT_FOUND") || isSoniqError(err, "INVALID_ARGS")) {
          return notFound(options.soniq, "flow", id);
        }
        throw err;
      }
      const body = { id, ...done } satisfies z.infer<typeof flowCancelJsonSchema>;
      return { body, audit: { ids: [id], result: { ...done } } };
    },
  },
  {
    method: "GET",
    path: "/api/batches/:id",
    async handle({ params, options }) {
      const view = await options.soniq.batches.get(params.id as string);
      if (!view) return notFound(options.soniq, "batch", params.id as string);
      return { body: batchJson(view) };
    },
  },
  {
    method: "POST",
    path: "/api/batches/:id/cancel",
    action: "batches.cancel",
    async handle({ params, options }) {
      const id = params.id as string;
      let done: Awaited<ReturnType<typeof options.soniq.batches.cancel>>;
      try {
        done = await options.soniq.batches.cancel(id);
      } catch (err) {
        if (isSoniqError(err, "NOT_FOUND")) return notFound(options.soniq, "batch", id);
        throw err;
      }
      const body = { id, ...done } satisfies z.infer<typeof batchCancelJsonSchema>;
      return { body, audit: { ids: [id], result: { ...done } } };
    },
  },
  {
    method: "GET",
    path: "/api/jobs/:id/workflow",
    async handle({ params, options }) {
      const of = await options.soniq.flows.of(params.id as string);
      return {
        body: {
          flow: of?.kind === "flow" ? of.id : null,
          batch: of?.kind === "batch" ? of.id : null,
        } satisfies z.infer<typeof jobWorkflowJsonSchema>,
      };
    },
  },
];
