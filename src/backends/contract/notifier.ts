/**
 * The notifier: wake-ups telling workers a queue has a job available, so they claim before
 * their next poll. Best effort — workers also poll.
 *
 * @internal Part of the backend contract, which is not a stable public API.
 */

/** Called with a queue name, or `"*"` when the notifier cannot tell which queue. */
export type WakeListener = (queue: string) => void;

/** The notifier. */
export interface Notifier {
  /**
   * Subscribes to wake-ups: `listener(queue)` is called (in a microtask) soon after a job in
   * `queue` becomes available, or with `"*"` when the backend cannot tell which (e.g. after
   * PostgreSQL's LISTEN connection was re-established and notifications may have been missed).
   * Whether wake-ups cross processes is `Capabilities.crossProcessWake`. After the backend is
   * closed, subscribing does nothing.
   * @returns The unsubscribe function.
   */
  subscribe(listener: WakeListener): () => void;
}
