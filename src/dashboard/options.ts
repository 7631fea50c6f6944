/**
 * The dashboard's options (`createDashboard`) and their checked, defaulted form: base path, auth,
 * access, CSRF, redaction, audit, preview size.
 */
import { SoniqError } from "../errors.js";
import type { DashboardAccess } from "./access.js";
import type { AuditRecord } from "./audit.js";
import { type HostPolicy, hostPolicy } from "./hosts.js";
import type { DashboardSource } from "./source.js";

/** Who is asking, as `auth` returns them: a name for the audit, plus anything `access` needs. */
export interface DashboardUser {
  /** Shown in the page and written to every audit record. */
  name: string;
  /** Anything else (roles, ids) for your `access` function. */
  readonly [key: string]: unknown;
}

/** Redaction hooks, applied server-side before a value leaves the process. */
export interface DashboardRedact {
  /** Returns what to show of a job's arguments. */
  args?: (jobName: string, args: unknown) => unknown;
  /** Returns what to show of a job's result. */
  result?: (jobName: string, result: unknown) => unknown;
  /** Returns what to show of an error text. */
  error?: (jobName: string, error: string) => string;
}

/** Options of {@link createDashboard}. */
export interface DashboardOptions<U extends DashboardUser = DashboardUser> {
  /** The Soniq instance (its admin API: `soniq.jobs`, `soniq.deadLetters`, …). */
  soniq: DashboardSource;
  /** Where the dashboard is mounted, e.g. `/admin/jobs`; `""` or `/` for the root. Runtime. */
  basePath?: string;
  /**
   * Who is asking: a user, or null for 401. Required; pass `"none"` to let everyone in as user
   * `anonymous` (only behind your own authentication).
   */
  auth: ((request: Request) => U | null | Promise<U | null>) | "none";
  /**
   * What a user may change: `"read-only"` (the default), `"all"`, or a per-action map
   * (`{ "jobs.cancel": true }`); a function decides per user.
   */
  access?: DashboardAccess | ((user: U) => DashboardAccess | Promise<DashboardAccess>);
  /**
   * `"double-submit"` (default): writes need the `x-soniq-csrf` header equal to the session's
   * `soniq_csrf` cookie, and a same-origin `Origin` when the browser sends one. `"none"` only
   * when `auth` reads a bearer token, never a cookie.
   */
  csrf?: "double-submit" | "none";
  /** Redaction of arguments, results and errors before they leave the process. */
  redact?: DashboardRedact;
  /** Called once per write, after the logger line and the `dashboard_action` event. */
  audit?: (record: AuditRecord) => void;
  /** Arguments and results above this many bytes of JSON are truncated in the page. Default 64 KiB. */
  maxPreviewBytes?: number;
  /** Job arguments are hidden until asked for (list and detail). Default false. */
  hideArgs?: boolean;
  /**
   * The `Host` header values the dashboard answers besides loopback (`localhost`, `127.x.x.x`,
   * `[::1]`, any port): host names or addresses, with an optional port (`jobs.example.com`,
   * `jobs.example.com:8443`); `"any"` answers every host. Any other host is refused with 403
   * `HOST_NOT_ALLOWED` before authentication (DNS rebinding). Default: loopback only when `auth`
   * is `"none"`, every host otherwise. @throws SoniqError `INVALID_OPTION` for an entry that is
   * not a host.
   */
  allowedHosts?: readonly string[] | "any";
  /**
   * Whether error texts (last error, timeline details) keep their stack frames: `true`, `false`
   * (the default: the frames are replaced by one `[N stack frames hidden]` line), or a function
   * deciding per user. Shown frames carry paths relative to the serving process's working
   * directory (an absolute path outside it keeps its file name only).
   */
  stackTraces?: boolean | ((user: U) => boolean | Promise<boolean>);
}

/** The options after checks and defaults. */
export interface ResolvedOptions<U extends DashboardUser> {
  soniq: DashboardSource;
  /** Normalised: `""` for the root, else `/a/b` (no trailing slash). */
  basePath: string;
  auth: (request: Request) => Promise<U | null>;
  access: (user: U) => Promise<DashboardAccess>;
  csrf: "double-submit" | "none";
  redact: DashboardRedact;
  audit: ((record: AuditRecord) => void) | undefined;
  maxPreviewBytes: number;
  hideArgs: boolean;
  hosts: HostPolicy;
  stackTraces: (user: U) => Promise<boolean>;
  /** This request's user may see stack frames (set per request by the handler; false here). */
  showStacks: boolean;
}

/** Normalises a base path: `/`, `""` → `""`; `admin/jobs/` → `/admin/jobs`. */
export function normaliseBasePath(path: string | undefined): string {
  const trimmed = (path ?? "").trim().replace(/\/+$/, "");
  if (trimmed === "") return "";
  if (!/^[A-Za-z0-9._~\-/]+$/.test(trimmed)) {
    throw new SoniqError(
      "INVALID_OPTION",
      `basePath ${JSON.stringify(path)}: use letters, digits, . _ ~ - and /`,
    );
  }
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

/** Checks and defaults {@link DashboardOptions}. @throws SoniqError `INVALID_OPTION`. */
export function resolveOptions<U extends DashboardUser>(
  options: DashboardOptions<U>,
): ResolvedOptions<U> {
  if (!options || typeof options !== "object" || !options.soniq) {
    throw new SoniqError("INVALID_OPTION", "createDashboard needs { soniq, auth }");
  }
  const { auth, access, csrf = "double-submit" } = options;
  if (auth !== "none" && typeof auth !== "function") {
    throw new SoniqError(
      "INVALID_OPTION",
      'createDashboard: auth is required (a function returning a user or null, or "none")',
    );
  }
  if (csrf !== "double-submit" && csrf !== "none") {
    throw new SoniqError("INVALID_OPTION", 'csrf must be "double-submit" or "none"');
  }
  const maxPreviewBytes = options.maxPreviewBytes ?? 64 * 1024;
  if (!Number.isInteger(maxPreviewBytes) || maxPreviewBytes < 256) {
    throw new SoniqError("INVALID_OPTION", "maxPreviewBytes must be an integer >= 256");
  }
  return {
    soniq: options.soniq,
    basePath: normaliseBasePath(options.basePath),
    auth:
      auth === "none"
        ? async () => ({ name: "anonymous" }) as U
        : async (request) => (await auth(request)) ?? null,
    access: async (user) => (typeof access === "function" ? access(user) : (access ?? "read-only")),
    csrf,
    redact: options.redact ?? {},
    audit: options.audit,
    maxPreviewBytes,
    hideArgs: options.hideArgs ?? false,
    hosts: hostPolicy(options.allowedHosts, auth === "none"),
    stackTraces: async (user) => {
      const shown = options.stackTraces ?? false;
      return typeof shown === "function" ? (await shown(user)) === true : shown === true;
    },
    showStacks: false,
  };
}
