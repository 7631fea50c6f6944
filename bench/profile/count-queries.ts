/**
 * Preloaded into a Soniq worker process by ./soniq-profile.ts (`--import`): counts the
 * statements the process sends through node-postgres and the time each kind waits for its
 * answer, and writes them as JSON to BENCH_QUERY_LOG at exit. Soniq itself is not changed:
 * this wraps `pg.Client.prototype.query`, which the pool and the LISTEN connection both use.
 */
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { REPO_ROOT } from "../adapters/support.js";

type QueryFn = (this: unknown, ...args: unknown[]) => unknown;

const require = createRequire(join(REPO_ROOT, "package.json"));
const pg = require("pg") as { Client: { prototype: { query: QueryFn } } };
const original = pg.Client.prototype.query;
const stats = new Map<string, { count: number; ms: number }>();

/** A short name for a statement: its first words, with schema-qualified names shortened. */
export function statementKind(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (/^WITH picked AS/i.test(t)) return "claim (WITH picked … FOR UPDATE SKIP LOCKED)";
  if (/^WITH input AS/i.test(t)) return "enqueue (WITH input … INSERT)";
  if (/^WITH inserted AS/i.test(t)) return "enqueue one (INSERT … VALUES)";
  const table = /(?:UPDATE|FROM|INTO)\s+(?:"[^"]+"\.)?"?([a-z_]+)"?/i.exec(t)?.[1] ?? "";
  const verb = t.split(" ")[0]?.toUpperCase() ?? "?";
  if (verb === "UPDATE" && /status = 'done'/.test(t)) {
    return /unnest\(/i.test(t)
      ? `complete, batched (UPDATE ${table} … FROM unnest(…))`
      : `complete (UPDATE ${table} SET status = 'done')`;
  }
  return `${verb} ${table}`.trim();
}

pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
  const first = args[0];
  const text =
    typeof first === "string" ? first : ((first as { text?: string } | null)?.text ?? "?");
  const kind = statementKind(text);
  const started = performance.now();
  const entry = stats.get(kind) ?? { count: 0, ms: 0 };
  stats.set(kind, entry);
  entry.count += 1;
  const done = () => {
    entry.ms += performance.now() - started;
  };
  // pg-pool passes a callback (last argument); direct callers get a promise back.
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === "function") {
    args[last] = (...results: unknown[]) => {
      done();
      return (callback as (...r: unknown[]) => unknown)(...results);
    };
  }
  const result = original.apply(this, args);
  if (typeof callback !== "function" && result instanceof Promise) result.then(done, done);
  return result;
};

process.on("exit", () => {
  const file = process.env.BENCH_QUERY_LOG;
  if (file) writeFileSync(file, JSON.stringify(Object.fromEntries(stats), null, 2));
});
