/**
 * The JSON shapes the CLI's `--json` and the dashboard's HTTP API share (issue 16), each with its
 * zod schema: jobs and dead letters, schedules, remote jobs. (Queues and workers are printed as
 * the admin API returns them — `QueueInfo`, `WorkerDetail` — by both.)
 */
export * from "./job.js";
export * from "./remote-job.js";
export * from "./schedule.js";
