/**
 * `soniq/dashboard/hono`: the dashboard as a hono handler —
 * `app.all("/admin/jobs/*", toHono(dashboard))` (and `app.all("/admin/jobs", …)`) with the same
 * `basePath`. Hono already speaks Fetch, so this passes the raw request through.
 */
import type { DashboardHandler } from "../handler.js";

/** The dashboard as a hono handler: `(c) => Response`. */
export function toHono(
  dashboard: DashboardHandler,
): (c: { req: { raw: Request } }) => Promise<Response> {
  return (c) => dashboard(c.req.raw);
}
