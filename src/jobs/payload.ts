/**
 * JSON payloads: arguments and results are stored as JSON text. A value is accepted only if it
 * comes back the same after a round trip; anything JSON would silently change is rejected, and so
 * is nesting deeper than {@link MAX_PAYLOAD_DEPTH} (every store and tool can read what is kept).
 */
import { createHash } from "node:crypto";
import { SoniqError } from "../errors.js";
import { withArticle } from "../value-text.js";

/**
 * How deeply arrays and objects may nest in a payload: 256 levels (`[[1]]` is 2). Deeper values
 * are refused with `INVALID_PAYLOAD` instead of overflowing the call stack (a raw `RangeError`)
 * or exceeding what a store's JSON functions read (SQLite's stop at 1000 levels).
 */
export const MAX_PAYLOAD_DEPTH = 256;

function describe(path: string): string {
  return path === "" ? "the value" : `at ${path}`;
}

/** The first reason `value` would not survive JSON (or nests too deep), or undefined. */
function findProblem(
  value: unknown,
  path: string,
  seen: Set<object>,
  depth: number,
): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value)
        ? undefined
        : `${describe(path)}: ${value} is not representable in JSON`;
    case "object": {
      if (value === null) return undefined;
      if (seen.has(value)) return `${describe(path)}: circular reference`;
      if (depth >= MAX_PAYLOAD_DEPTH) {
        const start = path.length > 60 ? `${path.slice(0, 60)}…` : path;
        return `${describe(start)}: arrays and objects nest deeper than ${MAX_PAYLOAD_DEPTH} levels`;
      }
      const proto = Object.getPrototypeOf(value);
      if (Array.isArray(value)) {
        seen.add(value);
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (item === undefined) return `${describe(`${path}[${i}]`)}: undefined in an array`;
          const problem = findProblem(item, `${path}[${i}]`, seen, depth + 1);
          if (problem) return problem;
        }
        seen.delete(value);
        return undefined;
      }
      if (proto !== Object.prototype && proto !== null) {
        const kind = (value as { constructor?: { name?: string } }).constructor?.name ?? "object";
        const hint = kind === "Date" ? " (pass date.toISOString())" : "";
        return `${describe(path)}: ${withArticle(kind)} is not plain JSON${hint}`;
      }
      seen.add(value);
      for (const [key, item] of Object.entries(value)) {
        if (item === undefined) continue; // dropped by JSON, like an absent key
        const problem = findProblem(item, path === "" ? key : `${path}.${key}`, seen, depth + 1);
        if (problem) return problem;
      }
      seen.delete(value);
      return undefined;
    }
    default:
      return `${describe(path)}: ${withArticle(typeof value)} is not representable in JSON`;
  }
}

/**
 * Serialises a payload to JSON text after checking it round-trips and fits the limit.
 * @param what - what it is, for the error message ("arguments of email.send").
 * @param maxBytes - size limit in bytes (UTF-8).
 * @throws SoniqError `INVALID_PAYLOAD` with the path of the first offending value (one that does
 * not round-trip, or arrays and objects nested deeper than {@link MAX_PAYLOAD_DEPTH}), or the size.
 */
export function toJsonText(value: unknown, what: string, maxBytes: number): string {
  const problem = findProblem(value, "", new Set(), 0);
  if (problem) throw new SoniqError("INVALID_PAYLOAD", `${what}: ${problem}`);
  const text = JSON.stringify(value);
  const size = Buffer.byteLength(text, "utf8");
  if (size > maxBytes) {
    throw new SoniqError(
      "INVALID_PAYLOAD",
      `${what}: ${size} bytes of JSON exceeds the limit of ${maxBytes} bytes (maxPayloadBytes)`,
    );
  }
  return text;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** The dedup key "unique by args" uses: the job name plus a SHA-256 of the canonical JSON. */
export function argsDedupKey(name: string, args: unknown): string {
  const digest = createHash("sha256")
    .update(JSON.stringify(canonical(args)))
    .digest("hex");
  return `${name}:args:${digest}`;
}
