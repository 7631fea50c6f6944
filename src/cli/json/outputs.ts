/**
 * The catalogue of every JSON document `soniq` prints: for each, the commands that print it and
 * its zod schema. scripts/json-schemas.ts writes one JSON Schema per entry to
 * docs/schemas/<name>.schema.json (`npm run docs:json-schemas`); the tests validate every
 * command's real output against them. Keys are camelCase throughout (docs/operations.md, "JSON
 * output").
 */
import { z } from "zod";
import {
  batchCancelJsonSchema,
  batchJsonSchema,
  bulkResultJsonSchema,
  deadLetterPageJsonSchema,
  errorJsonSchema,
  flowCancelJsonSchema,
  flowJsonSchema,
  jobActionsJsonSchema,
  jobDetailJsonSchema,
  jobPageJsonSchema,
  jobValuesJsonSchema,
  queueDetailJsonSchema,
  queueJsonSchema,
  remoteJobJsonSchema,
  remotePollNowJsonSchema,
  remoteResolveJsonSchema,
  scheduleActionJsonSchema,
  scheduleDetailJsonSchema,
  scheduleJsonSchema,
  scheduleRunNowJsonSchema,
  statusJsonSchema,
  workerJsonSchema,
} from "../../admin/json/index.js";
import { deployChecksJsonSchema } from "./deploy-check.js";
import { enqueueJsonSchema } from "./enqueue-result.js";
import { recoverJsonSchema } from "./recovery-result.js";
import { schedulePreviewJsonSchema, scheduleSyncJsonSchema } from "./schedule-sync.js";
import { setupJsonSchema } from "./setup-result.js";
import { workerExitJsonSchema } from "./worker-exit.js";

/** One JSON document the CLI prints. */
export interface JsonOutput {
  /** The commands that print it (with `--json`, unless `ndjson`). */
  commands: readonly string[];
  /** What it is, for the schema's `description`. */
  description: string;
  /** Its shape. */
  schema: z.ZodType;
  /** True when each line of the output is one document of this shape (NDJSON). */
  ndjson?: boolean;
}

/** Every JSON document the CLI prints, by the name of its schema file. */
export const JSON_OUTPUTS: Readonly<Record<string, JsonOutput>> = {
  error: {
    commands: ["every command with --json, on any failure (exit 2; on standard output)"],
    description: "A failure: its Soniq error code and message.",
    schema: errorJsonSchema,
  },
  flow: {
    commands: ["soniq flows show --json"],
    description:
      "A flow (docs/workflows.md): its state, jobs per state and every job, the root first.",
    schema: flowJsonSchema,
  },
  batch: {
    commands: ["soniq batches show --json"],
    description:
      "A batch (docs/workflows.md): open, running or finished, member counts, callbacks and members.",
    schema: batchJsonSchema,
  },
  "flow-cancel": {
    commands: ["soniq flows cancel --json"],
    description:
      "A flow's cancel (docs/workflows.md): jobs cancelled at once and running jobs asked to stop.",
    schema: flowCancelJsonSchema,
  },
  "batch-cancel": {
    commands: ["soniq batches cancel --json"],
    description:
      "A batch's cancel (docs/workflows.md): whether it sealed the batch, members cancelled at once and running members asked to stop.",
    schema: batchCancelJsonSchema,
  },
  setup: {
    commands: ["soniq setup --json"],
    description: "The schema is ready, and where.",
    schema: setupJsonSchema,
  },
  enqueue: {
    commands: ["soniq enqueue --json"],
    description: "The enqueued job's id, queue and maxAttempts.",
    schema: enqueueJsonSchema,
  },
  "worker-exit": {
    commands: ["soniq worker --json (one line at exit)"],
    description: "How the worker ended: its id, the reason, the exit code, the jobs released.",
    schema: workerExitJsonSchema,
  },
  recover: {
    commands: ["soniq recover --json"],
    description: "What one recovery pass did.",
    schema: recoverJsonSchema,
  },
  status: {
    commands: ["soniq status --json"],
    description: "Counts by state and per queue, remote jobs, live workers, dead workers.",
    schema: statusJsonSchema,
  },
  "jobs-list": {
    commands: ["soniq jobs list --json"],
    description: "One page of jobs, newest first, and the next page's cursor.",
    schema: jobPageJsonSchema,
  },
  "job-detail": {
    commands: ["soniq jobs show --json", "soniq dlq show --json"],
    description: "One job or dead letter with its values and timeline.",
    schema: jobDetailJsonSchema,
  },
  "job-action": {
    commands: [
      "soniq jobs cancel|retry|delete <id...> --json",
      "soniq jobs resolve-step <id> <step> --json",
      "soniq jobs clear-checkpoint <id> --json",
      "soniq dlq replay|delete <id...> --json",
    ],
    description: "Each job's state after the action: one object for one id, an array for several.",
    schema: jobActionsJsonSchema,
  },
  "bulk-result": {
    commands: [
      "soniq jobs cancel|retry|delete --all --json",
      "soniq dlq replay|delete --all --json",
    ],
    description: "What a bulk action did (or would do, with --dry-run).",
    schema: bulkResultJsonSchema,
  },
  "dlq-list": {
    commands: ["soniq dlq list --json"],
    description: "One page of dead letters, newest first, and the next page's cursor.",
    schema: deadLetterPageJsonSchema,
  },
  "dlq-export-line": {
    commands: ["soniq dlq export (NDJSON: one document a line)"],
    description: "One exported dead letter (a dlq list row).",
    schema: jobValuesJsonSchema,
    ndjson: true,
  },
  "queues-list": {
    commands: ["soniq queues list --json"],
    description: "Every queue with jobs or a configuration.",
    schema: z.array(queueJsonSchema),
  },
  "queue-detail": {
    commands: ["soniq queues show --json"],
    description:
      "One queue with what flow-control limits hold back: jobs held by a concurrency limit and by a rate limit, the next window, its top keys.",
    schema: queueDetailJsonSchema,
  },
  queue: {
    commands: ["soniq queues pause|resume|set --json"],
    description: "The queue after the change.",
    schema: queueJsonSchema,
  },
  workers: {
    commands: ["soniq workers --json"],
    description: "Every worker incarnation, live or dead.",
    schema: z.array(workerJsonSchema),
  },
  "remote-list": {
    commands: ["soniq remote list --json"],
    description: "Remote submissions, newest first.",
    schema: z.array(remoteJobJsonSchema),
  },
  "remote-job": {
    commands: ["soniq remote show --json"],
    description: "One remote job's submission record.",
    schema: remoteJobJsonSchema,
  },
  "remote-resolve": {
    commands: ["soniq remote resolve --json"],
    description: "The frozen job and the resolution recorded.",
    schema: remoteResolveJsonSchema,
  },
  "remote-poll-now": {
    commands: ["soniq remote poll-now --json"],
    description: "The job is due at the next worker tick.",
    schema: remotePollNowJsonSchema,
  },
  "schedules-list": {
    commands: ["soniq schedules list --json"],
    description: "Every schedule.",
    schema: z.array(scheduleJsonSchema),
  },
  "schedule-detail": {
    commands: ["soniq schedules show --json"],
    description: "One schedule with its next instants and its history.",
    schema: scheduleDetailJsonSchema,
  },
  "schedule-preview": {
    commands: ["soniq schedules preview --json"],
    description: "The next instants of an expression.",
    schema: schedulePreviewJsonSchema,
  },
  "schedule-run": {
    commands: ["soniq schedules run --json"],
    description: "The schedule and the job the manual run enqueued.",
    schema: scheduleRunNowJsonSchema,
  },
  "schedule-action": {
    commands: ["soniq schedules pause|resume|remove --json"],
    description: "The schedule and what was done.",
    schema: scheduleActionJsonSchema,
  },
  "schedules-sync": {
    commands: ["soniq schedules sync --json"],
    description: "Schedule ids by what the reconciliation did.",
    schema: scheduleSyncJsonSchema,
  },
  "check-deploy": {
    commands: ["soniq check-deploy --json"],
    description: "Every worker of every manifest with its grace period, budget and verdict.",
    schema: deployChecksJsonSchema,
  },
};

/**
 * The JSON Schema (draft 2020-12) of one output, as docs/schemas/<name>.schema.json holds it.
 * @param name - a key of {@link JSON_OUTPUTS}.
 */
export function jsonSchemaOf(name: string, output: JsonOutput): Record<string, unknown> {
  const generated = z.toJSONSchema(output.schema, { target: "draft-2020-12" }) as Record<
    string,
    unknown
  >;
  const { $schema, ...rest } = generated;
  return {
    $schema,
    title: name,
    description: `${output.description} Printed by: ${output.commands.join("; ")}.`,
    ...rest,
  };
}
