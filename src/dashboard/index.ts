/**
 * `soniq/dashboard`: the dashboard as a Fetch-API handler, its options and the Basic-auth helper.
 * Framework adapters: `soniq/dashboard/express`, `soniq/dashboard/fastify`, `soniq/dashboard/hono`.
 */
export type { DashboardAccess, DashboardAction } from "./access.js";
export { DASHBOARD_ACTIONS } from "./access.js";
export type { AuditRecord } from "./audit.js";
export { basicAuth } from "./basic-auth.js";
export { createDashboard, type DashboardHandler } from "./handler.js";
export type { DashboardOptions, DashboardRedact, DashboardUser } from "./options.js";
export type { Overview } from "./overview.js";
export type { Preview } from "./preview.js";
export type { DashboardSource } from "./source.js";
export type { JobDetailView, JobSummary } from "./views.js";
