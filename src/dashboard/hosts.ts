/**
 * The `Host` check that defeats DNS rebinding: a page on an attacker's domain that resolves to
 * 127.0.0.1 reaches a loopback dashboard with `Host: evil.example:6161`. Without credentials
 * (`auth: "none"`) the dashboard answers only loopback names (and the `allowedHosts` you list);
 * a browser sends `Host: localhost` or `127.0.0.1` only for a page the user opened there.
 */
import { isIP } from "node:net";
import { SoniqError } from "../errors.js";

/** Which `Host` values the dashboard answers: every one, or loopback names plus these. */
export type HostPolicy = { kind: "any" } | { kind: "listed"; hosts: ReadonlySet<string> };

/**
 * A host as compared: lower case, without a trailing dot; IPv6 in brackets. `null` when the text
 * is not a host name, an IP address or either with a port.
 */
export function normaliseHost(value: string): { name: string; port: string | null } | null {
  const text = value.trim().toLowerCase();
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::([0-9]{1,5}))?$/.exec(text);
  if (!match) return null;
  const name = (match[1] as string).replace(/\.$/, "");
  if (name === "" || (name.startsWith("[") && isIP(name.slice(1, -1)) !== 6)) return null;
  return { name, port: match[2] ?? null };
}

/** True for `localhost`, `127.x.x.x` and `[::1]`. */
export function isLoopbackName(name: string): boolean {
  return name === "localhost" || name === "[::1]" || (isIP(name) === 4 && name.startsWith("127."));
}

/**
 * The policy from the `allowedHosts` option. Entries are host names or addresses, with an
 * optional port (`jobs.example.com`, `jobs.example.com:8443`, `[fd00::1]`); `"any"` turns the
 * check off. Left out: loopback only when `auth` is `"none"`, else any.
 * @throws SoniqError `INVALID_OPTION` for an entry that is not a host.
 */
export function hostPolicy(
  allowedHosts: readonly string[] | "any" | undefined,
  noAuth: boolean,
): HostPolicy {
  if (allowedHosts === "any" || (allowedHosts === undefined && !noAuth)) return { kind: "any" };
  const hosts = new Set<string>();
  if (allowedHosts !== undefined && !Array.isArray(allowedHosts)) {
    throw new SoniqError("INVALID_OPTION", 'allowedHosts must be a list of hosts or "any"');
  }
  for (const entry of allowedHosts ?? []) {
    const host = typeof entry === "string" ? normaliseHost(entry) : null;
    if (!host) {
      throw new SoniqError(
        "INVALID_OPTION",
        `allowedHosts: ${JSON.stringify(entry)} is not a host (name or address, optional :port)`,
      );
    }
    hosts.add(host.port === null ? host.name : `${host.name}:${host.port}`);
  }
  return { kind: "listed", hosts };
}

/** True when `policy` lets a request with this `Host` header value through. */
export function hostAllowed(policy: HostPolicy, hostHeader: string | null): boolean {
  if (policy.kind === "any") return true;
  if (hostHeader === null) return false;
  const host = normaliseHost(hostHeader);
  if (!host) return false;
  if (isLoopbackName(host.name)) return true;
  return (
    policy.hosts.has(host.name) ||
    (host.port !== null && policy.hosts.has(`${host.name}:${host.port}`))
  );
}
