/**
 * A typed, guarded event bus: listeners subscribe by event name; `emit` calls them in order and
 * never throws, waits or lets a rejection escape, so an event can never strand the job whose
 * moment it reports. A listener's error (thrown or rejected) is logged and dropped.
 */
import type { Logger } from "./logger.js";

/** An event map: event name → payload type (see `SoniqEventMap`). */
export type EventMap = { [name: string]: object };

/**
 * A listener of one event. It may be async; its result is not awaited (a rejection is logged). The payload object is
 * shared by every listener of that emit: read it, do not change it.
 */
export type EventListener<P> = (payload: Readonly<P>) => unknown;

/**
 * A listener of every event: `(name, payload)`, where checking `name` narrows `payload`.
 * It may be async; its result is not awaited.
 */
export type AnyEventListener<M extends EventMap> = (
  ...event: { [K in keyof M & string]: [name: K, payload: Readonly<M[K]>] }[keyof M & string]
) => unknown;

/** Removes the listener it was returned for. Idempotent. */
export type Unsubscribe = () => void;

/** The subscribing side of an {@link EventBus} (what `soniq.events` exposes). */
export interface EventSubscriber<M extends EventMap> {
  /** Calls `listener` on every `name` event until the returned function is called. */
  on<K extends keyof M & string>(name: K, listener: EventListener<M[K]>): Unsubscribe;
  /** Calls `listener` on the next `name` event only. The returned function cancels it. */
  once<K extends keyof M & string>(name: K, listener: EventListener<M[K]>): Unsubscribe;
  /** Calls `listener` on every event (after that event's own listeners). */
  onAny(listener: AnyEventListener<M>): Unsubscribe;
}

type Listener = (payload: object) => unknown;
type Any = (name: string, payload: object) => unknown;

/**
 * The bus. Emitting with nobody listening is a map lookup; call sites on a hot path may ask
 * {@link EventBus.hasListeners} first and skip building the payload. Listeners added or removed
 * during an emit take effect from the next emit (lists are copied on write, never on emit).
 */
export class EventBus<M extends EventMap> implements EventSubscriber<M> {
  private readonly byName = new Map<string, readonly Listener[]>();
  private any: readonly Any[] = [];

  /** @param logger - where listener failures are logged (warn level, with the event's name). */
  constructor(private readonly logger: Logger) {}

  on<K extends keyof M & string>(name: K, listener: EventListener<M[K]>): Unsubscribe {
    const entry = listener as Listener;
    this.byName.set(name, [...(this.byName.get(name) ?? []), entry]);
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      const rest = (this.byName.get(name) ?? []).filter((l) => l !== entry);
      if (rest.length === 0) this.byName.delete(name);
      else this.byName.set(name, rest);
    };
  }

  once<K extends keyof M & string>(name: K, listener: EventListener<M[K]>): Unsubscribe {
    const off = this.on(name, (payload) => {
      off();
      return listener(payload);
    });
    return off;
  }

  onAny(listener: AnyEventListener<M>): Unsubscribe {
    const entry = listener as unknown as Any;
    this.any = [...this.any, entry];
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      this.any = this.any.filter((l) => l !== entry);
    };
  }

  /** Whether an emit of `name` would reach any listener (so a caller may skip building it). */
  hasListeners(name: keyof M & string): boolean {
    return this.any.length > 0 || this.byName.has(name);
  }

  /**
   * Calls `name`'s listeners, then the catch-all ones, synchronously and in subscription order.
   * Never throws and never waits: a listener that throws or rejects is logged and skipped.
   */
  emit<K extends keyof M & string>(name: K, payload: M[K]): void {
    const listeners = this.byName.get(name);
    if (listeners !== undefined) {
      for (const listener of listeners) this.guard(name, () => listener(payload));
    }
    if (this.any.length > 0) {
      for (const listener of this.any) this.guard(name, () => listener(name, payload));
    }
  }

  private guard(name: string, call: () => unknown): void {
    try {
      const result: unknown = call();
      if (isThenable(result)) result.then(undefined, (err: unknown) => this.failed(name, err));
    } catch (err) {
      this.failed(name, err);
    }
  }

  private failed(name: string, err: unknown): void {
    try {
      this.logger.warn({ err: describe(err), event: name }, "event listener failed; ignored");
    } catch {
      // A logger that throws must not reach the emitter either.
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/** Text for any thrown value, even one whose `toString` throws or does not exist. */
function describe(err: unknown): string {
  try {
    return err instanceof Error ? (err.stack ?? err.message) : String(err);
  } catch {
    return `non-Error thrown (${typeof err})`;
  }
}
