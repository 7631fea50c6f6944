/**
 * `basicAuth`: an `auth` function for HTTP Basic credentials (what `soniq dashboard` uses when
 * `SONIQ_DASHBOARD_USER` / `SONIQ_DASHBOARD_PASSWORD` are set). A 401 then asks the browser for
 * them. Bearer-like: no cookie carries the session, but the CSRF check stays on by default.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { DashboardUser } from "./options.js";

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** An `auth` function accepting exactly `user:password`; the user is `{ name: user }`. */
export function basicAuth(credentials: {
  user: string;
  password: string;
}): ((request: Request) => DashboardUser | null) & { challenge: string } {
  const want = digest(`${credentials.user}:${credentials.password}`);
  const check = (request: Request): DashboardUser | null => {
    const header = request.headers.get("authorization") ?? "";
    const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
    if (!match) return null;
    const given = Buffer.from(match[1] as string, "base64").toString("utf8");
    return timingSafeEqual(digest(given), want) ? { name: credentials.user } : null;
  };
  return Object.assign(check, { challenge: 'Basic realm="Soniq dashboard", charset="UTF-8"' });
}
