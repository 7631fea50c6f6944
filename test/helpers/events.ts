/**
 * Test helper: awaits a Soniq event instead of polling the store. Call it BEFORE the action that
 * causes the event (it subscribes at once and sees only later events), await it after.
 */
import type { EventMap, EventSubscriber } from "../../src/index.js";

/** Something with events: a bus, or an instance with `events` (a `Soniq`). */
export type EventSource<M extends EventMap> = EventSubscriber<M> | { events: EventSubscriber<M> };

/**
 * Resolves with the payload of the first `name` event for which `predicate` is true, or rejects
 * after `timeoutMs` milliseconds (default 10 000). A predicate may count: `() => ++n === 3`.
 */
export function waitForEvent<M extends EventMap, K extends keyof M & string>(
  source: EventSource<M>,
  name: K,
  predicate: (payload: Readonly<M[K]>) => boolean = () => true,
  timeoutMs = 10_000,
): Promise<Readonly<M[K]>> {
  const events = "events" in source ? source.events : source;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for event ${name}`));
    }, timeoutMs);
    const off = events.on(name, (payload) => {
      let matched: boolean;
      try {
        matched = predicate(payload);
      } catch (err) {
        matched = false;
        clearTimeout(timer);
        off();
        reject(err);
      }
      if (!matched) return;
      clearTimeout(timer);
      off();
      resolve(payload);
    });
  });
}
