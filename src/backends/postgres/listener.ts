/**
 * The LISTEN side of PostgreSQL wake-ups: one dedicated `pg.Client` that LISTENs on a channel,
 * connects lazily, and re-connects (and re-LISTENs) by itself with a capped backoff whenever the
 * connection drops. Connection errors never escape as unhandled `'error'` events.
 */
import pg from "pg";
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
  /** Connection and LISTEN errors (the listener recovers from them by itself). */
  onError(error: unknown): void;
  /** First re-connect delay in milliseconds (default 100); doubles after each failure. */
  initialBackoffMs?: number;
  /** Longest re-connect delay in milliseconds (default 3000). */
  maxBackoffMs?: number;
}

/** How long {@link PgListener.stop} waits for the connection to end, in milliseconds. */
const STOP_WAIT_MS = 1000;

/** A self-healing LISTEN connection. See the module comment. */
export class PgListener {
  private readonly options: PgListenerOptions;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private client: pg.Client | null = null;
  private state: "idle" | "connecting" | "listening" | "waiting" | "stopped" = "idle";
  private timer: NodeJS.Timeout | null = null;
  private backoffMs: number;
  /** Bumped for every new connection attempt and on stop: events of older clients are ignored. */
  private generation = 0;
  /** Whether notifications may have been missed since the first attempt. */
  private missed = false;

  constructor(options: PgListenerOptions) {
    this.options = options;
    this.initialBackoffMs = options.initialBackoffMs ?? 100;
    this.maxBackoffMs = options.maxBackoffMs ?? 3000;
    this.backoffMs = this.initialBackoffMs;
  }

  /** True while LISTEN is in place. */
  get listening(): boolean {
    return this.state === "listening";
  }

  /** Starts connecting (once; later calls do nothing). Returns at once. */
  start(): void {
    if (this.state !== "idle") return;
    void this.connect();
  }

  /** Stops for good: cancels any pending re-connect and ends the connection (bounded wait). */
  async stop(): Promise<void> {
    this.state = "stopped";
    this.generation += 1;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const client = this.client;
    this.client = null;
    if (!client) return;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      client.end().catch(() => undefined),
      new Promise<void>((resolve) => {
        timeout = setTimeout(resolve, STOP_WAIT_MS);
      }),
    ]);
    clearTimeout(timeout);
  }

  private async connect(): Promise<void> {
    this.state = "connecting";
    this.generation += 1;
    const generation = this.generation;
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      keepAlive: true,
      connectionTimeoutMillis: 5000,
    });
    this.client = client;
    client.on("error", (err) => {
      if (generation !== this.generation) return;
      this.options.onError(err);
      this.lost(generation);
    });
    client.on("end", () => this.lost(generation));
    client.on("notification", (message) => {
      if (generation !== this.generation || message.channel !== this.options.channel) return;
      this.options.onNotify(message.payload || "*", message.processId);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(this.options.channel)}`);
    } catch (err) {
      // Already handled when the 'error' event came first (state is then "waiting").
      if (generation !== this.generation || this.state !== "connecting") return;
      this.options.onError(err);
      this.lost(generation);
      return;
    }
    if (generation !== this.generation || this.state !== "connecting") return;
    this.state = "listening";
    this.backoffMs = this.initialBackoffMs;
    if (this.missed) this.options.onReconnect();
  }

  /** The connection of `generation` failed or ended: drop it and schedule a re-connect. */
  private lost(generation: number): void {
    if (generation !== this.generation) return;
    if (this.state !== "connecting" && this.state !== "listening") return;
    this.missed = true;
    const client = this.client;
    this.client = null;
    client?.end().catch(() => undefined);
    this.state = "waiting";
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.maxBackoffMs);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.state === "waiting") void this.connect();
    }, delay);
  }
}
