/**
 * The PostgreSQL backend's notifier: the in-process wake bus, plus a LISTEN connection
 * (listener.ts) opened on the first subscription, so writes by other processes wake this one.
 */
import type { Notifier, WakeListener } from "../contract/index.js";
import { WakeBus } from "../shared/wake-bus.js";
import { PgListener } from "./listener.js";

/** Options of {@link PgNotifier}. */
export interface PgNotifierOptions {
  /**
   * Connection string for the dedicated LISTEN connection; `null`: none (behind a
   * transaction-mode pooler without a direct URL), so only this process's own writes wake it.
   */
  connectionString: string | null;
  /** The channel to LISTEN on. */
  channel: string;
  /**
   * Server process ids of the pool: their NOTIFYs were already delivered locally. Empty behind a
   * transaction-mode pooler (a process id there names a server connection other clients share).
   */
  ownPids: ReadonlySet<number>;
  /** LISTEN connection errors (it re-connects by itself). */
  onError: (error: unknown) => void;
  /**
   * Offered each notification from another process first; true when it consumed it (a cancel
   * request, admin-store.ts), which is then not a queue wake-up.
   */
  route?: (payload: string) => boolean;
  /**
   * Offered every notification before anything else, this process's own included (a finish
   * notice is for whoever waits, wherever the job finished); true when it consumed it.
   */
  routeAll?: (payload: string) => boolean;
  /** LISTEN is in place: the first time, and again after each re-connect. */
  onListening?: () => void;
  /** The LISTEN connection dropped (`"lost"`) or is back and re-LISTENed (`"restored"`). */
  onListenChange?: (change: "lost" | "restored", error?: unknown) => void;
}

/**
 * Wake-ups across processes. The first subscription opens the dedicated LISTEN connection (kept
 * until {@link close}; none when the connection string is `null`); it re-connects by itself,
 * then calls every listener with `"*"`.
 * Listeners run in a microtask. After close, subscribing returns a no-op unsubscribe.
 */
export class PgNotifier implements Notifier {
  private readonly bus = new WakeBus();
  private listener: PgListener | null = null;
  private closed = false;

  /** Opens nothing until the first subscription. */
  constructor(private readonly options: PgNotifierOptions) {}

  /** See {@link Notifier.subscribe}. */
  subscribe(listener: WakeListener): () => void {
    if (this.closed) return () => undefined;
    const unsubscribe = this.bus.subscribe(listener);
    this.open();
    return unsubscribe;
  }

  /**
   * Opens the LISTEN connection unless it is open (kept until {@link close}); false when there
   * is none to open (no connection string, or closed).
   */
  open(): boolean {
    const { connectionString } = this.options;
    if (this.closed || connectionString === null) return false;
    if (this.listener) return true;
    const { ownPids } = this.options;
    this.listener = new PgListener({
      connectionString,
      channel: this.options.channel,
      onNotify: (payload, senderPid) => {
        if (this.options.routeAll?.(payload)) return;
        // The pool's own writes already woke (or told) this process's subscribers.
        if (ownPids.has(senderPid)) return;
        if (!this.options.route?.(payload)) this.wake(payload);
      },
      onListening: () => this.options.onListening?.(),
      onReconnect: () => {
        this.options.onListenChange?.("restored");
        this.wake("*");
      },
      onLost: (err) => this.options.onListenChange?.("lost", err),
      onError: (err) => this.options.onError(err),
    });
    void this.listener.start();
    return true;
  }

  /** Whether LISTEN is in place right now. */
  get listening(): boolean {
    return this.listener?.listening ?? false;
  }

  /** Wakes this process's subscribers for `queue` (after one of the pool's own writes). */
  wake(queue: string): void {
    this.bus.wake(queue);
  }

  /** Drops every subscriber and stops the LISTEN connection. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    this.bus.close();
    const listener = this.listener;
    this.listener = null;
    await listener?.stop();
  }
}
