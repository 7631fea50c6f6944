/**
 * The in-process wake bus: the {@link Notifier} each backend feeds with its own writes (memory and
 * SQLite only these; PostgreSQL also with LISTEN notifications).
 */
import type { Notifier, WakeListener } from "../contract/index.js";

/** A set of wake-up listeners, each called in a microtask. */
export class WakeBus implements Notifier {
  private readonly listeners = new Set<WakeListener>();
  private closed = false;

  /** See {@link Notifier.subscribe}. After {@link close}, returns a no-op unsubscribe. */
  subscribe(listener: WakeListener): () => void {
    if (this.closed) return () => undefined;
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Calls every listener with `queue` (or `"*"`), each in its own microtask. */
  wake(queue: string): void {
    for (const listener of this.listeners) queueMicrotask(() => listener(queue));
  }

  /** Whether anyone listens. */
  get size(): number {
    return this.listeners.size;
  }

  /** Drops every listener; later subscriptions do nothing. */
  close(): void {
    this.closed = true;
    this.listeners.clear();
  }
}
