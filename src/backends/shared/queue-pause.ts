/**
 * Whether a queue is paused now (docs/flow-control.md, "Back-pressure: ctx.rateLimited"): an
 * operator's pause (`paused`, no `paused_until`) lasts until a resume; a handler's
 * `ctx.rateLimited(ms, { scope: "queue" })` pauses it until `paused_until` (migration
 * `rate_limits`), after which it counts as not paused without any write. Every claim, hand-off and
 * queue listing reads a queue's pause through these expressions.
 */
import { NOW_MS } from "../sqlite/clock.js";

/** PostgreSQL: true when the `soniq_queues` row `alias` is paused now. */
export const pgQueuePaused = (alias: string) =>
  `(${alias}.paused AND (${alias}.paused_until IS NULL OR ${alias}.paused_until > now()))`;

/** SQLite: true (1) when the `soniq_queues` row (`alias.`-qualified when given) is paused now. */
export const sqliteQueuePaused = (alias?: string) => {
  const a = alias === undefined ? "" : `${alias}.`;
  return `(${a}paused = 1 AND (${a}paused_until IS NULL OR ${a}paused_until > ${NOW_MS}))`;
};
