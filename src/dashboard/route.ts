/**
 * The shape of a dashboard API route and what it receives: method, path pattern, the action a
 * write needs, and a handler that returns a JSON body (or a whole `Response`) plus, for a write,
 * what the audit records.
 */
import type { DashboardAction } from "./access.js";
import type { BulkOperations } from "./operations.js";
import type { DashboardUser, ResolvedOptions } from "./options.js";

/** What a route handler receives. */
export interface RouteContext {
  request: Request;
  url: URL;
  /** The `:name` parts of the path, decoded. */
  params: Record<string, string>;
  options: ResolvedOptions<DashboardUser>;
  user: DashboardUser;
  actions: ReadonlySet<DashboardAction>;
  /** The CSRF token of this session (sent by `GET /api/me`). */
  csrfToken: string;
  /** The live bulk operations of this dashboard handler. */
  operations: BulkOperations;
}

/** What a write tells the audit. */
export interface RouteAudit {
  /** The audited action when the route's own `action` is not it (bulk routes). */
  action?: string;
  ids: string[];
  filter?: Record<string, unknown> | null;
  result?: Record<string, unknown> | null;
}

/** What a route returns: a JSON body (status 200 unless given) or a ready `Response`. */
export type RouteResult = Response | { status?: number; body: unknown; audit?: RouteAudit };

/** One route. */
export interface Route {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** `/api/jobs/:id/cancel`: `:name` matches one path segment. */
  path: string;
  /** The grant a write needs (every non-GET route has one). */
  action?: DashboardAction;
  /** The audit's `ids` when the handler throws (usually the `:id`). */
  handle(ctx: RouteContext): Promise<RouteResult>;
}

/** Reads a JSON object body (at most 1 MiB). @throws SoniqError-free `Error` for bad JSON. */
export async function jsonBody(request: Request): Promise<Record<string, unknown>> {
  const text = await request.text();
  if (text.length > 1024 * 1024) throw new BadRequest("the body is over 1 MiB");
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequest("the body is not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new BadRequest("the body must be a JSON object");
  }
  return value as Record<string, unknown>;
}

/** A request the API refuses with 400. */
export class BadRequest extends Error {}

/** Matches `path` against a pattern; the decoded params, or null. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    const g = got[i] as string;
    if (w.startsWith(":")) {
      if (g === "") return null;
      try {
        params[w.slice(1)] = decodeURIComponent(g);
      } catch {
        return null;
      }
    } else if (w !== g) return null;
  }
  return params;
}
