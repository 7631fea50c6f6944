/**
 * The text form of what flow-control limits hold back (docs/flow-control.md, "Seeing what a limit
 * holds back"), shared by `soniq status` and `soniq queues show`: one table row per key.
 */
import type { KeyFlowJson } from "../admin/json/index.js";
import { table } from "./admin-flags.js";

/** `n/limit` or `n` when there is no limit. */
function ofLimit(n: number, limit: number | null): string {
  return limit === null ? String(n) : `${n}/${limit}`;
}

/**
 * A table of keys: queue, key, running (of its concurrency limit), due, held by concurrency,
 * starts in the window (of its rate limit), held by rate, next window.
 * @param indent - put before each row.
 */
export function keyFlowTable(keys: readonly KeyFlowJson[], indent = ""): string {
  const rows = [
    [
      `${indent}QUEUE`,
      "KEY",
      "RUNNING",
      "DUE",
      "HELD (CONCURRENCY)",
      "STARTS IN WINDOW",
      "HELD (RATE)",
      "NEXT WINDOW",
    ],
  ];
  for (const k of keys) {
    rows.push([
      `${indent}${k.queue}`,
      k.key,
      ofLimit(k.running, k.concurrencyLimit),
      String(k.due),
      String(k.heldByConcurrency),
      k.rateLimit === null ? "-" : ofLimit(k.startsInWindow, k.rateLimit),
      String(k.heldByRate),
      k.pausedUntil !== null && k.nextWindowAt !== null
        ? `${k.nextWindowAt} (paused)`
        : (k.nextWindowAt ?? "-"),
    ]);
  }
  return table(rows);
}
