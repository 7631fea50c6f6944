/**
 * The parts of docs/dashboard.openapi.json generated from zod — the shared views (src/admin/json)
 * and the dashboard's own answers (src/dashboard/meta-json.ts):
 * the component schemas of what the CLI's `--json` and the HTTP API both return, and the 200
 * responses of the routes that return them. scripts/json-schemas.ts rewrites them
 * (`npm run docs:json-schemas`); the rest of the file (routes, grants, parameters) is written by
 * hand. A test checks the committed file is up to date and validates real responses against it.
 */
import { z } from "zod";
import {
  batchCancelJsonSchema,
  batchJsonSchema,
  bulkResultJsonSchema,
  checkpointJsonSchema,
  errorJsonSchema,
  flowCancelJsonSchema,
  flowJsonSchema,
  jobActionJsonSchema,
  jobDetailJsonSchema,
  jobJsonSchema,
  queueFlowJsonSchema,
  queueJsonSchema,
  remoteJobJsonSchema,
  remotePollNowJsonSchema,
  remoteResolveJsonSchema,
  scheduleDetailJsonSchema,
  scheduleRunNowJsonSchema,
  workerJsonSchema,
} from "../admin/json/index.js";
import {
  cancelStateJsonSchema,
  jobCountJsonSchema,
  meJsonSchema,
  okJsonSchema,
  overviewJsonSchema,
} from "./meta-json.js";

/** A value as the dashboard sends it: a server-cut preview (dashboard/preview.ts). */
export const previewJsonSchema = z.object({
  /** Pretty JSON text, at most the preview size in UTF-8 bytes; `""` when hidden or absent. */
  json: z.string(),
  /** The full JSON text's size in UTF-8 bytes. */
  bytes: z.number().int(),
  truncated: z.boolean(),
  /** Left out on purpose (`hideArgs`): ask for the download. */
  hidden: z.boolean(),
});

/** A list row of `GET /api/jobs` and `GET /api/dead-letter`: the CLI's shape, args a preview. */
export const jobSummaryJsonSchema = jobJsonSchema.extend({ args: previewJsonSchema });

/** `GET /api/jobs/:id`: the CLI's `jobs show --json` shape, args and result previews. */
export const jobDetailViewJsonSchema = jobDetailJsonSchema.extend({
  args: previewJsonSchema,
  result: previewJsonSchema,
  checkpoint: checkpointJsonSchema.extend({ value: previewJsonSchema }).nullable(),
});

/** `GET /api/jobs/:id/workflow`: the flow or batch a job belongs to (the job page's link). */
export const jobWorkflowJsonSchema = z.object({
  /** The flow's id (its root's) when the job is one of a flow's, else null. */
  flow: z.string().nullable(),
  /** The batch's id when the job is a member or a callback of a batch, else null. */
  batch: z.string().nullable(),
});

/** Component schemas generated from zod, by name (`#/components/schemas/<name>`). */
export const OPENAPI_COMPONENTS: Readonly<Record<string, z.ZodType>> = {
  Error: errorJsonSchema,
  Preview: previewJsonSchema,
  JobSummary: jobSummaryJsonSchema,
  JobDetail: jobDetailViewJsonSchema,
  BulkResult: bulkResultJsonSchema,
  Queue: queueJsonSchema,
  QueueFlow: queueFlowJsonSchema,
  Worker: workerJsonSchema,
  RemoteJob: remoteJobJsonSchema,
  RemoteResolve: remoteResolveJsonSchema,
  RemotePollNow: remotePollNowJsonSchema,
  ScheduleDetail: scheduleDetailJsonSchema,
  ScheduleRunNow: scheduleRunNowJsonSchema,
  Me: meJsonSchema,
  Overview: overviewJsonSchema,
  JobCount: jobCountJsonSchema,
  CancelState: cancelStateJsonSchema,
  JobAction: jobActionJsonSchema,
  Ok: okJsonSchema,
  Flow: flowJsonSchema,
  Batch: batchJsonSchema,
  FlowCancel: flowCancelJsonSchema,
  BatchCancel: batchCancelJsonSchema,
  JobWorkflow: jobWorkflowJsonSchema,
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const now = { type: "string", format: "date-time" };

/** The 200 response schema of routes returning a generated component, by `method path`. */
export const OPENAPI_RESPONSES: Readonly<Record<string, object>> = {
  "get /api/me": ref("Me"),
  "get /api/overview": ref("Overview"),
  "get /api/health/live": ref("Ok"),
  "get /api/jobs/count": ref("JobCount"),
  "post /api/jobs/{id}/cancel": ref("CancelState"),
  "post /api/jobs/{id}/retry": ref("Ok"),
  "post /api/jobs/{id}/resolve-step": ref("JobAction"),
  "post /api/jobs/{id}/clear-checkpoint": ref("JobAction"),
  "delete /api/jobs/{id}": ref("Ok"),
  "post /api/dead-letter/{id}/replay": ref("Ok"),
  "delete /api/dead-letter/{id}": ref("Ok"),
  "get /api/queues": {
    type: "object",
    properties: { queues: { type: "array", items: ref("Queue") } },
    required: ["queues"],
    additionalProperties: false,
  },
  "get /api/flow": {
    type: "object",
    properties: { flow: { type: "array", items: ref("QueueFlow") } },
    required: ["flow"],
    additionalProperties: false,
  },
  "post /api/queues/{name}/pause": ref("Queue"),
  "post /api/queues/{name}/resume": ref("Queue"),
  "patch /api/queues/{name}": ref("Queue"),
  "get /api/workers": {
    type: "object",
    properties: { workers: { type: "array", items: ref("Worker") }, now },
    required: ["workers", "now"],
    additionalProperties: false,
  },
  "get /api/workers/{id}": {
    type: "object",
    properties: { worker: ref("Worker"), now },
    required: ["worker", "now"],
    additionalProperties: false,
  },
  "post /api/schedules/{id}/run-now": ref("ScheduleRunNow"),
  "post /api/remote/{id}/resolve": ref("RemoteResolve"),
  "post /api/remote/{id}/poll-now": ref("RemotePollNow"),
  "get /api/flows/{id}": ref("Flow"),
  "get /api/batches/{id}": ref("Batch"),
  "post /api/flows/{id}/cancel": ref("FlowCancel"),
  "post /api/batches/{id}/cancel": ref("BatchCancel"),
  "get /api/jobs/{id}/workflow": ref("JobWorkflow"),
};

/** An OpenAPI document, as far as this module reads and writes it. */
interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, unknown> };
}

/**
 * `doc` (docs/dashboard.openapi.json, parsed) with its generated parts rewritten from zod.
 * @throws Error when a route of {@link OPENAPI_RESPONSES} is not in the document.
 */
export function withGeneratedSchemas<T extends OpenApiDocument>(doc: T): T {
  for (const [name, schema] of Object.entries(OPENAPI_COMPONENTS)) {
    doc.components.schemas[name] = z.toJSONSchema(schema, { target: "openapi-3.0" });
  }
  for (const [route, schema] of Object.entries(OPENAPI_RESPONSES)) {
    const [method, path] = route.split(" ") as [string, string];
    const operation = doc.paths[path]?.[method];
    if (!operation) throw new Error(`docs/dashboard.openapi.json has no ${route}`);
    operation.responses["200"] = {
      description: "OK",
      content: { "application/json": { schema } },
    };
  }
  return doc;
}

/**
 * The text of docs/dashboard.openapi.json from its current text with the generated parts fresh,
 * or null when they already are (compared as JSON: the file is formatted by biome).
 */
export function openApiText(current: string): string | null {
  const before = JSON.parse(current) as OpenApiDocument;
  const after = withGeneratedSchemas(JSON.parse(current) as OpenApiDocument);
  return JSON.stringify(after) === JSON.stringify(before)
    ? null
    : `${JSON.stringify(after, null, 2)}\n`;
}
