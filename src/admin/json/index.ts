/**
 * The JSON shapes of every `--json` output, the dashboard's HTTP API and the admin API's JSON
 * views, each with its zod schema (docs/schemas/ is generated from them): one key style,
 * camelCase, and instants as ISO-8601 text (docs/operations.md, "JSON output"). Where the CLI and
 * the HTTP API return the same thing — a job, a dead letter, a schedule, a remote job, a queue, a
 * worker, a bulk result, an error — both build it here, so the two cannot drift.
 */
export * from "./action-result.js";
export * from "./bulk-result.js";
export * from "./error.js";
export * from "./flow.js";
export * from "./instant.js";
export * from "./job.js";
export * from "./queue.js";
export * from "./remote-job.js";
export * from "./schedule.js";
export * from "./status.js";
export * from "./worker.js";
export * from "./workflow.js";
