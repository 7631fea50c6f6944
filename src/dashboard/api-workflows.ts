/**
 * The workflow routes (docs/workflows.md): a flow with every job and its state, a batch with its
 * counts, callbacks and members — the documents `soniq flows show --json` / `soniq batches show
 * --json` print (admin/json/workflow.ts) — and which flow or batch a job belongs to, for the job
 * page's link. Reads only: no grant beyond the session's.
 */

import type { z } from "zod";
import { batchJson, flowJson } from "../admin/json/index.js";
import type { jobWorkflowJsonSchema } from "./openapi-schemas.js";
import type { Route } from "./route.js";

function notFound(what: "flow" | "batch", id: string): Response {
  return Response.json(
    { error: { code: "NOT_FOUND", message: `no ${what} with id ${id}` } },
    { status: 404 },
  );
}

/** The workflow routes. */
export const workflowRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/flows/:id",
    async handle({ params, options }) {
      const view = await options.soniq.flows.get(params.id as string);
      if (!view) return notFound("flow", params.id as string);
      return { body: flowJson(view) };
    },
  },
  {
    method: "GET",
    path: "/api/batches/:id",
    async handle({ params, options }) {
      const view = await options.soniq.batches.get(params.id as string);
      if (!view) return notFound("batch", params.id as string);
      return { body: batchJson(view) };
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
