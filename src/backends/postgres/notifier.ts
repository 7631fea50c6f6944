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
   * Server process ids of the pool: their NOTIFYs were, as a rule, already delivered locally (see
   * {@link OWN_ECHO_MS} for the exception). Empty behind a transaction-mode pooler (a process id
   * there names a server connection other clients share).
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
  /**
   * Whether `payload` is one `route` consumes (a cancel request), asked without acting on it: such
   * a notification from the pool's own processes was handled locally and is dropped.
   */
  isControl?: (payload: string) => boolean;
  /** The LISTEN connection dropped (`"lost"`) or is back and re-LISTENed (`"restored"`). */
  onListenChange?: (change: "lost" | "restored", error?: unknown) => void;
}

/**
 * Milliseconds during which a NOTIFY from the pool's own server processes for a queue is taken as
 * the echo of a local wake-up (one of the pool's NOTIFYing writes woke this process's subscribers
 * directly after its commit) and dropped — the first such NOTIFY only. Any other of its own comes
 * from a trigger the write did not know about — the release of a job that waited for the one just
 * finished (docs/workflows.md; migration 019) — and wakes this process's subscribers, so a worker
 * here claims the released job at once instead of at its next poll. (Since migration 026 such a
 * release also names its queue to the pool connection that made it, which wakes the queue right
 * after the statement — connection.ts, `onWakeNotice` — so its NOTIFY mostly arrives as an echo.) An echo taken for a release
 * costs one claim; a release taken for an echo (it came within this window of a local wake-up
 * whose own echo had not arrived yet) waits for the next poll, as every release did before.
 */
export const OWN_ECHO_MS = 200;

/** Milliseconds a NOTIFY of the pool's own is held for the local wake-up it may echo. */
export const OWN_HOLD_MS = 50;

/**
 * Wake-ups across processes. The first subscription opens the dedicated LISTEN connection (kept
 * until {@link close}; none when the connection string is `null`); it re-connects by itself.
 * Each time LISTEN is in place (the first time and after every re-connect) it calls every
 * listener with `"*"`: a NOTIFY sent before then reached nobody in this process.
 * Listeners run in a microtask. After close, subscribing returns a no-op unsubscribe.
 */
export class PgNotifier implements Notifier {
  private readonly bus = new WakeBus();
  private listener: PgListener | null = null;
  private closed = false;
  /** Queue → when this process last woke itself for it (performance.now(), ms), until its echo. */
  private readonly wokenLocally = new Map<string, number>();
  /** Queue → the timer of a NOTIFY of its own held for a local wake-up ({@link ownNotify}). */
  private readonly heldOwn = new Map<string, NodeJS.Timeout>();

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
        if (ownPids.has(senderPid)) {
          // The pool's own writes already woke (or told) this process's subscribers, except
          // for a release by a trigger (OWN_ECHO_MS).
          if (this.options.isControl?.(payload)) return;
          this.ownNotify(payload);
          return;
        }
        if (!this.options.route?.(payload)) this.bus.wake(payload);
      },
      onListening: () => {
        this.options.onListening?.();
        // A NOTIFY sent before this LISTEN was in place (a job enqueued by another process
        // between this process's start and now, or while the connection was down) reached
        // nobody here: every subscriber looks once, as after a reconnect.
        this.bus.wake("*");
      },
      onReconnect: () => this.options.onListenChange?.("restored"),
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
    const held = this.heldOwn.get(queue);
    if (held !== undefined) {
      // The NOTIFY held for the queue was this write's own echo (it came first).
      clearTimeout(held);
      this.heldOwn.delete(queue);
    } else {
      this.wokenLocally.set(queue, performance.now());
    }
    this.bus.wake(queue);
  }

  /**
   * A NOTIFY from the pool's own server processes: dropped when it echoes a local wake-up made
   * within {@link OWN_ECHO_MS} (one echo per wake-up); otherwise held {@link OWN_HOLD_MS} for the
   * local wake-up of the write it may echo (the two travel on different connections), and a
   * wake-up of this process's subscribers when none came.
   */
  private ownNotify(queue: string): void {
    const at = this.wokenLocally.get(queue);
    if (at !== undefined) {
      this.wokenLocally.delete(queue);
      if (performance.now() - at < OWN_ECHO_MS) return;
    }
    if (this.heldOwn.has(queue) || this.closed) return;
    const timer = setTimeout(() => {
      this.heldOwn.delete(queue);
      this.bus.wake(queue);
    }, OWN_HOLD_MS);
    timer.unref();
    this.heldOwn.set(queue, timer);
  }

  /** Drops every subscriber and stops the LISTEN connection. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.heldOwn.values()) clearTimeout(timer);
    this.heldOwn.clear();
    this.bus.close();
    const listener = this.listener;
    this.listener = null;
    await listener?.stop();
  }
}
