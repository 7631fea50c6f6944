/**
 * The LISTEN side of PostgreSQL wake-ups, as a service: one dedicated `pg.Client` that LISTENs on a
 * channel and, whenever the connection drops or cannot be made, re-connects (and re-LISTENs) by
 * itself with a capped backoff. The re-connect loop is the service's body; stopping aborts its
 * signal, which ends the connection and the backoff wait. Connection errors never escape as
 * unhandled `'error'` events.
 */
import pg from "pg";
import { pino } from "pino";
import { BaseService, sleep } from "../../lifecycle/service.js";
import type { Logger } from "../../observability/logger.js";
import { quoteIdent } from "./identifiers.js";

/** Options of {@link PgListener}. */
export interface PgListenerOptions {
  /** libpq-style connection string of the database. */
  connectionString: string;
  /** The channel to LISTEN on (an identifier of at most 63 bytes). */
  channel: string;
  /**
   * Called with each notification's payload (`"*"` when it has none) and the process id of the
   * server backend that sent it (PostgreSQL's `NotificationResponse` carries it).
   */
  onNotify(payload: string, senderPid: number): void;
  /**
   * Called once LISTEN is in place again after a lost connection or a failed first attempt:
   * notifications may have been missed meanwhile.
   */
  onReconnect(): void;
  /**
   * Called each time LISTEN is in place: the first time and after every re-connect (before
   * {@link onReconnect}). Default: nothing.
   */
  onListening?(): void;
  /** Called when an established LISTEN connection drops (with its error, if any). */
  onLost?(error: unknown): void;
  /** Connection and LISTEN errors (the listener recovers from them by itself). */
  onError(error: unknown): void;
  /** First re-connect delay in milliseconds (default 100); doubles after each failure. */
  initialBackoffMs?: number;
  /** Longest re-connect delay in milliseconds (default 3000). */
  maxBackoffMs?: number;
  /** Logger for the service's own lines (stop bound reached). Default: silent. */
  logger?: Logger;
}

/** How long {@link PgListener.stop} waits for the connection to end, in milliseconds. */
const STOP_WAIT_MS = 1000;

/** How long one connection attempt may take, in milliseconds. */
const CONNECT_TIMEOUT_MS = 5000;

/** A self-healing LISTEN connection. See the module comment. */
export class PgListener extends BaseService {
  private readonly options: PgListenerOptions;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private isListening = false;

  constructor(options: PgListenerOptions) {
    super({
      name: "pg-listener",
      logger: options.logger ?? pino({ level: "silent" }),
      stopBoundMs: STOP_WAIT_MS,
    });
    this.options = options;
    this.initialBackoffMs = options.initialBackoffMs ?? 100;
    this.maxBackoffMs = options.maxBackoffMs ?? 3000;
  }

  /** True while LISTEN is in place. */
  get listening(): boolean {
    return this.isListening;
  }

  /** Connects, LISTENs and waits for the connection to drop; then backs off and does it again. */
  protected async run(signal: AbortSignal): Promise<void> {
    let backoffMs = this.initialBackoffMs;
    let missed = false;
    while (!signal.aborted) {
      let established = false;
      const error = await this.listenOnce(signal, () => {
        established = true;
        backoffMs = this.initialBackoffMs;
        this.options.onListening?.();
        if (missed) this.options.onReconnect();
      });
      if (signal.aborted) break;
      if (established) this.options.onLost?.(error);
      if (error !== undefined) this.options.onError(error);
      missed = true;
      const delay = backoffMs;
      backoffMs = Math.min(backoffMs * 2, this.maxBackoffMs);
      await sleep(delay, signal);
    }
  }

  /**
   * One connection: connect, LISTEN, call `onListening`, then wait until it fails, ends or the
   * signal aborts. Resolves with the error that ended it (undefined for a plain end or a stop).
   * A stop resolves as soon as the connection was told to end (Terminate sent): nothing depends on
   * the server closing its side, which takes its backend's exit (10–30 ms on a busy host), so a
   * stop does not wait for it; the socket closes on its own, its errors still caught here.
   */
  private async listenOnce(signal: AbortSignal, onListening: () => void): Promise<unknown> {
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      keepAlive: true,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    let active = true;
    const lost = new Promise<{ error: unknown }>((resolve) => {
      client.on("error", (error) => resolve({ error }));
      client.on("end", () => resolve({ error: undefined }));
    });
    client.on("notification", (message) => {
      if (!active || message.channel !== this.options.channel) return;
      this.options.onNotify(message.payload || "*", message.processId);
    });
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      client.end().catch(() => undefined);
    };
    let stopped: () => void = () => undefined;
    const stop = new Promise<{ error: undefined }>((resolve) => {
      stopped = () => resolve({ error: undefined });
    });
    const onAbort = () => {
      end();
      stopped();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const ready = (async () => {
        await client.connect();
        await client.query(`LISTEN ${quoteIdent(this.options.channel)}`);
        return { error: undefined, ready: true as const };
      })();
      ready.catch(() => undefined); // a stop may leave it behind; its error is `lost`'s too
      const first = await Promise.race([ready, lost, stop]).catch((error: unknown) => ({ error }));
      if (!("ready" in first)) return first.error;
      if (signal.aborted) return undefined;
      this.isListening = true;
      onListening();
      return (await Promise.race([lost, stop])).error;
    } finally {
      active = false;
      this.isListening = false;
      signal.removeEventListener("abort", onAbort);
      end();
    }
  }
}
