/**
 * `createDashboard`: the dashboard as a Fetch-API handler `(Request) => Promise<Response>`. A
 * request whose `Host` the dashboard does not answer is 403 `HOST_NOT_ALLOWED` first (hosts.ts,
 * DNS rebinding). Every request is authenticated (`auth`; null → 401); reads need nothing more;
 * an admin API error answers with its code and status (error-status.ts); a write must be
 * POST/PATCH/DELETE, pass the CSRF check (cookie sessions) and be granted by `access` (else 403),
 * and is audited once. Every response carries the CSP and hardening headers.
 */
import type { z } from "zod";
import { isSoniqError } from "../errors.js";
import { type DashboardAction, grantedActions } from "./access.js";
import { deadLetterRoutes } from "./api-dead-letters.js";
import { jobRoutes } from "./api-jobs.js";
import { operationRoutes } from "./api-operations.js";
import { queueWorkerRoutes } from "./api-queues-workers.js";
import { remoteRoutes } from "./api-remote.js";
import { scheduleRoutes } from "./api-schedules.js";
import { workflowRoutes } from "./api-workflows.js";
import { assetType, indexHtml, loadAssets } from "./assets.js";
import { audit } from "./audit.js";
import { errorStatus } from "./error-status.js";
import { hostAllowed } from "./hosts.js";
import type { meJsonSchema, okJsonSchema, overviewJsonSchema } from "./meta-json.js";
import { BulkOperations } from "./operations.js";
import {
  type DashboardOptions,
  type DashboardUser,
  type ResolvedOptions,
  resolveOptions,
} from "./options.js";
import { overview } from "./overview.js";
import { BadRequest, matchPath, type Route, type RouteContext } from "./route.js";
import {
  CSRF_COOKIE,
  csrfCookie,
  csrfMatches,
  newCsrfToken,
  readCookie,
  sameOrigin,
  secure,
} from "./security.js";

/** The dashboard: a Fetch-API handler. Mount it at its `basePath`. */
export type DashboardHandler = ((request: Request) => Promise<Response>) & {
  /** The normalised base path (`""` for the root). */
  readonly basePath: string;
};

/** A function `auth` with a `challenge` makes a 401 carry `WWW-Authenticate: <challenge>`. */
interface Challenging {
  challenge?: string;
}

const metaRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/me",
    async handle({ user, actions, csrfToken, options }) {
      return {
        body: {
          user: user.name,
          actions: [...actions],
          csrfToken,
          hideArgs: options.hideArgs,
          maxPreviewBytes: options.maxPreviewBytes,
        } satisfies z.infer<typeof meJsonSchema>,
      };
    },
  },
  {
    method: "GET",
    path: "/api/overview",
    async handle({ options }) {
      return { body: (await overview(options.soniq)) satisfies z.infer<typeof overviewJsonSchema> };
    },
  },
  {
    method: "GET",
    path: "/api/health/live",
    async handle() {
      return { body: { ok: true } satisfies z.infer<typeof okJsonSchema> };
    },
  },
];

/** @internal Every API route, for the OpenAPI test. */
export const ROUTES: Route[] = [
  ...metaRoutes,
  ...jobRoutes,
  ...deadLetterRoutes,
  ...queueWorkerRoutes,
  ...scheduleRoutes,
  ...remoteRoutes,
  ...workflowRoutes,
  ...operationRoutes,
];

/** The request's path for a log line (never throws). */
function safePath(request: Request): string {
  try {
    return new URL(request.url).pathname;
  } catch {
    return "";
  }
}

function errorResponse(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status });
}

/**
 * Creates the dashboard handler. See docs/dashboard.md.
 *
 * ```ts
 * const dashboard = createDashboard({ soniq, basePath: "/admin/jobs", auth: (req) => userOf(req), access: "read-only" });
 * ```
 * @throws SoniqError `INVALID_OPTION` for missing `soniq`/`auth` or bad values.
 */
export function createDashboard<U extends DashboardUser>(
  options: DashboardOptions<U>,
): DashboardHandler {
  const o = resolveOptions(options);
  const challenge =
    typeof options.auth === "function" ? (options.auth as Challenging).challenge : undefined;
  const base = o.basePath;
  const operations = new BulkOperations(o.soniq.logger);

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (!hostAllowed(o.hosts, request.headers.get("host") ?? url.host)) {
      return errorResponse(
        403,
        "HOST_NOT_ALLOWED",
        "this Host is not one the dashboard answers (see the allowedHosts option)",
      );
    }
    const path = url.pathname;
    if (path !== base && !path.startsWith(`${base}/`))
      return errorResponse(404, "NOT_FOUND", "not the dashboard");
    const rest = path.slice(base.length);
    if (rest === "")
      return new Response(null, { status: 308, headers: { location: `${base}/${url.search}` } });

    const user = await o.auth(request);
    if (!user) {
      const response = errorResponse(401, "UNAUTHENTICATED", "sign in to see the dashboard");
      if (challenge) response.headers.set("www-authenticate", challenge);
      return response;
    }

    let csrfToken = readCookie(request, CSRF_COOKIE) ?? "";
    let setCookie: string | null = null;
    if (o.csrf === "double-submit" && !/^[A-Za-z0-9_-]{43}$/.test(csrfToken)) {
      csrfToken = newCsrfToken();
      setCookie = csrfCookie(csrfToken, base, url.protocol === "https:");
    }

    if (request.method === "GET" && (rest === "/" || rest === "/index.html")) {
      const response = new Response(indexHtml(loadAssets()), {
        headers: { "content-type": "text/html; charset=utf-8" },
      });
      if (setCookie) response.headers.append("set-cookie", setCookie);
      return response;
    }
    if (request.method === "GET" && rest.startsWith("/static/")) {
      const name = rest.slice("/static/".length);
      const file = loadAssets().files.get(name);
      if (!file) return errorResponse(404, "NOT_FOUND", "no such asset");
      return new Response(file, {
        headers: {
          "content-type": assetType(name),
          "cache-control": "public, max-age=31536000, immutable",
        },
      });
    }

    const matches = ROUTES.map((route) => ({ route, params: matchPath(route.path, rest) })).filter(
      (m) => m.params !== null,
    );
    if (matches.length === 0) return errorResponse(404, "NOT_FOUND", `no route ${rest}`);
    const match = matches.find((m) => m.route.method === request.method);
    if (!match)
      return errorResponse(405, "METHOD_NOT_ALLOWED", `${request.method} is not allowed here`);
    const { route } = match;
    const write = route.method !== "GET";
    const actions = grantedActions(await o.access(user));
    const ctx: RouteContext = {
      request,
      url,
      params: match.params as Record<string, string>,
      options: {
        ...o,
        showStacks: await o.stackTraces(user),
      } as unknown as ResolvedOptions<DashboardUser>,
      user,
      actions,
      csrfToken,
      operations,
    };
    const record = (
      action: string,
      outcome: string,
      extra: {
        ids?: string[];
        filter?: Record<string, unknown> | null;
        result?: Record<string, unknown> | null;
      } = {},
    ) =>
      audit(o.soniq, o.audit, {
        user: user.name,
        action,
        ids:
          extra.ids ?? (ctx.params.id ? [ctx.params.id] : ctx.params.name ? [ctx.params.name] : []),
        filter: extra.filter ?? null,
        outcome,
        result: extra.result ?? null,
      });
    const actionName = route.action ?? `${route.method} ${route.path}`;

    if (write) {
      if (o.csrf === "double-submit" && (!sameOrigin(request) || !csrfMatches(request))) {
        record(actionName, "CSRF");
        return errorResponse(
          403,
          "CSRF",
          "a write needs the dashboard's CSRF token from the same origin",
        );
      }
      if (route.action && !actions.has(route.action as DashboardAction)) {
        record(actionName, "FORBIDDEN");
        return errorResponse(403, "FORBIDDEN", `your access does not grant ${route.action}`);
      }
    }

    let response: Response;
    try {
      const result = await route.handle(ctx);
      if (result instanceof Response) {
        response = result;
        if (write)
          record(actionName, response.status === 403 ? "FORBIDDEN" : `HTTP_${response.status}`);
      } else {
        response = Response.json(result.body, { status: result.status ?? 200 });
        if (write) record(result.audit?.action ?? actionName, "ok", result.audit ?? {});
      }
    } catch (err) {
      if (err instanceof BadRequest) response = errorResponse(400, "BAD_REQUEST", err.message);
      else if (isSoniqError(err) && errorStatus(err.code) < 500) {
        response = errorResponse(errorStatus(err.code), err.code, err.message);
      } else if (isSoniqError(err)) {
        // A server-side failure: the code says what kind, the log says the rest (a database
        // error's text can name hosts and tables).
        o.soniq.logger.error({ err, path: rest }, "dashboard request failed");
        response = errorResponse(
          errorStatus(err.code),
          err.code,
          "the request failed on the server; see the server's log",
        );
      } else {
        o.soniq.logger.error({ err, path: rest }, "dashboard request failed");
        response = errorResponse(500, "INTERNAL", "the request failed; see the server's log");
      }
      if (write)
        record(
          actionName,
          ((await response.clone().json()) as { error: { code: string } }).error.code,
        );
    }
    if (setCookie) response.headers.append("set-cookie", setCookie);
    return response;
  }

  const handler = async (request: Request): Promise<Response> => {
    let response: Response;
    // HEAD is answered like GET, without the body (RFC 9110 §9.3.2): load balancers and uptime
    // checks probe with it.
    const head = request.method === "HEAD";
    try {
      response = await handle(head ? new Request(request, { method: "GET" }) : request);
    } catch (err) {
      // `auth` or `access` threw (or the body could not be read): a 500 with the same headers,
      // never a rejected promise (an adapter that has taken over the response would hang).
      o.soniq.logger.error({ err, path: safePath(request) }, "dashboard request failed");
      response = errorResponse(500, "INTERNAL", "the request failed; see the server's log");
    }
    // Responses made by Response.json/new Response have mutable headers.
    secure(response.headers, response.headers.get("cache-control")?.includes("immutable") === true);
    if (head) {
      await response.body?.cancel();
      return new Response(null, { status: response.status, headers: response.headers });
    }
    return response;
  };
  return Object.assign(handler, { basePath: base });
}
