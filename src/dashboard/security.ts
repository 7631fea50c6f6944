/**
 * The dashboard's HTTP hardening: security headers (a Content-Security-Policy with no inline
 * script and no `eval`), the CSRF double-submit cookie and its check, and the same-origin check of
 * writes.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";

/** The CSP of every response: scripts and styles only from this origin, nothing inline, no eval. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The name of the CSRF cookie; the page echoes it in the `x-soniq-csrf` header. */
export const CSRF_COOKIE = "soniq_csrf";
/** The header a write carries its CSRF token in. */
export const CSRF_HEADER = "x-soniq-csrf";

/** Sets the headers every dashboard response carries. */
export function secure(headers: Headers, cacheable = false): Headers {
  headers.set("content-security-policy", CONTENT_SECURITY_POLICY);
  headers.set("x-content-type-options", "nosniff");
  headers.set("referrer-policy", "no-referrer");
  headers.set("x-frame-options", "DENY");
  headers.set("cross-origin-opener-policy", "same-origin");
  headers.set("cross-origin-resource-policy", "same-origin");
  if (!cacheable) headers.set("cache-control", "no-store");
  return headers;
}

/** The value of cookie `name` in the request, or null. */
export function readCookie(request: Request, name: string): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** A fresh CSRF token (32 random bytes, base64url). */
export function newCsrfToken(): string {
  return randomBytes(32).toString("base64url");
}

/** The `Set-Cookie` value that stores `token` for the dashboard's path. */
export function csrfCookie(token: string, basePath: string, secureCookie: boolean): string {
  return `${CSRF_COOKIE}=${token}; Path=${basePath || "/"}; HttpOnly; SameSite=Strict${secureCookie ? "; Secure" : ""}`;
}

/** True when the header token equals the cookie token (constant time). */
export function csrfMatches(request: Request): boolean {
  const cookie = readCookie(request, CSRF_COOKIE);
  const header = request.headers.get(CSRF_HEADER);
  if (!cookie || !header) return false;
  const a = Buffer.from(cookie);
  const b = Buffer.from(header);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * False when the browser says the request comes from another origin (`Origin`, or
 * `Sec-Fetch-Site: cross-site`); a request without those headers (a script, curl) passes.
 */
export function sameOrigin(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site === "cross-site" || site === "same-site") return false;
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  try {
    const host = request.headers.get("host") ?? new URL(request.url).host;
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
