/**
 * What Soniq says when PostgreSQL's LISTEN connection drops or comes back: a log line and an
 * event (`listen_connection_lost`, `listen_connection_restored`; docs/events.md). Polling covers
 * the gap; on return every queue is woken once.
 */
import type { EventBus } from "./event-bus.js";
import type { SoniqEventMap } from "./events.js";
import type { Logger } from "./logger.js";

/** Longest error text kept in the log line and the event, in characters. */
const ERROR_TEXT_MAX = 300;

/**
 * Logs (warn on loss, info on return) and emits one change of the LISTEN connection on `channel`.
 * Never throws (the bus isolates listeners).
 */
export function reportListenChange(
  logger: Logger,
  events: EventBus<SoniqEventMap>,
  change: "lost" | "restored",
  channel: string,
  error?: unknown,
): void {
  if (change === "lost") {
    const text = error === undefined ? undefined : String(error).slice(0, ERROR_TEXT_MAX);
    logger.warn(
      { channel, err: text },
      "LISTEN connection lost: re-connecting by itself; polling covers the gap meanwhile",
    );
    events.emit("listen_connection_lost", {
      channel,
      ...(text === undefined ? {} : { error: text }),
    });
  } else {
    logger.info(
      { channel },
      "LISTEN connection re-established (re-LISTENed): waking every queue once",
    );
    events.emit("listen_connection_restored", { channel });
  }
}
