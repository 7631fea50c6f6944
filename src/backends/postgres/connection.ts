/**
 * The PostgreSQL backend's connection pool and call tracking: named prepared statements, the
 * open/closed guard, driver-error translation (CLOSED, SCHEMA_NOT_READY), the pool's server
 * process ids (so the listener can skip this process's own NOTIFYs) and a close that waits for
 * calls in flight.
 */
import { createHash } from "node:crypto";
import pg from "pg";
import { SoniqError } from "../../errors.js";
import type { PgQueryable } from "../contract/index.js";
import type { RawClaimedRow } from "./rows.js";
import { SESSION_SETUP, type Statements } from "./sql.js";

/** SQLSTATEs meaning the schema or a table is missing: undefined_table, invalid_schema_name. */
const MISSING_SCHEMA_CODES = new Set(["42P01", "3F000"]);

/** What one statement returned. */
export interface PgResult<R> {
  /** The rows, typed by the caller. */
  rows: R[];
  /** Rows changed or returned. */
  rowCount: number;
}

/** Options of {@link PgConnection}. */
export interface PgConnectionOptions {
  /** `postgres://…` connection string. */
  connectionString: string;
  /** The validated schema (for error messages). */
  schema: string;
  /** Most connections the pool opens at once. */
  poolSize: number;
  /** Called with errors of idle pool connections (the pool recovers by itself). */
  onPoolError: (error: unknown) => void;
}

/** The pool every PostgreSQL store runs its statements on. */
export class PgConnection {
  /**
   * Server process ids of this pool's connections. A NOTIFY sent from one of them was caused by
   * this backend's own write, which already woke this process's subscribers directly (right
   * after the write returned); the listener skips it, so one write wakes a local worker once.
   * Every pool statement that NOTIFYs therefore wakes locally as well.
   */
  readonly poolPids = new Set<number>();
  /** The underlying pool (migrations take it whole). */
  readonly pool: pg.Pool;
  private readonly schema: string;
  private readonly clientPids = new WeakMap<object, number>();
  private readonly statementNames = new Map<string, string>();
  private closedFlag = false;
  private closing: Promise<void> | null = null;
  /** Calls using the pool right now; close() waits for them before ending the pool. */
  private inflight = 0;
  private idle: (() => void) | null = null;

  /** Creates the pool; opens no connection until the first call. */
  constructor(options: PgConnectionOptions) {
    this.schema = options.schema;
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize,
      keepAlive: true,
      // Probe an idle connection after 10 s, so a peer that vanished is noticed.
      keepAliveInitialDelayMillis: 10_000,
      // Keep idle connections for a minute (pg's default is 10 s): a worker's next burst after a
      // quiet spell should not pay for new connections.
      idleTimeoutMillis: 60_000,
      // A server that does not answer must not hang a call forever: fail, and let callers retry.
      connectionTimeoutMillis: 10_000,
      // Awaited by pg-pool before the connection is used: runs SESSION_SETUP (session settings,
      // and the server process id — pg_backend_pid(), the id a NOTIFY carries; through a pooler
      // the startup handshake's id is not the server's). A failure fails the caller's connect.
      onConnect: async (client) => {
        const { rows } = await client.query<{ pid: number }>(SESSION_SETUP);
        const pid = rows[0]?.pid;
        if (typeof pid === "number") {
          this.clientPids.set(client, pid);
          this.poolPids.add(pid);
        }
      },
    });
    // An idle connection that dies (server restart, admin kill) must not crash the process.
    this.pool.on("error", (err) => options.onPoolError(err));
    this.pool.on("remove", (client) => {
      const pid = this.clientPids.get(client);
      if (pid !== undefined) this.poolPids.delete(pid);
    });
  }

  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.closedFlag;
  }

  /** @throws SoniqError `CLOSED` after {@link close}. */
  assertOpen(): void {
    if (this.closedFlag) throw new SoniqError("CLOSED", "the PostgreSQL backend is closed");
  }

  /** Maps driver errors to Soniq's codes (CLOSED, SCHEMA_NOT_READY); others pass through. */
  private translate(err: unknown): unknown {
    if (this.closedFlag) {
      return new SoniqError("CLOSED", "the PostgreSQL backend was closed during the call", {
        cause: err,
      });
    }
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code === "string" && MISSING_SCHEMA_CODES.has(code)) {
      return new SoniqError(
        "SCHEMA_NOT_READY",
        `Soniq's tables are missing in schema "${this.schema}": run \`soniq setup\``,
        { cause: err },
      );
    }
    return err;
  }

  /** Runs one statement on `via` (a caller's client) or the pool. */
  async run<R>(text: string, values: unknown[], via?: PgQueryable): Promise<PgResult<R>> {
    return this.track(async () => {
      // Soniq's own connections use named (server-side prepared) statements: parsed and planned
      // once per connection. A caller's client (transactional enqueue) gets plain queries.
      const result = via
        ? await via.query(text, values)
        : await this.pool.query({ name: this.statementName(text), text, values });
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    });
  }

  /** A stable prepared-statement name per SQL text (per backend; the schema is in the text). */
  private statementName(text: string): string {
    let name = this.statementNames.get(text);
    if (name === undefined) {
      name = `soniq_${this.statementNames.size}_${createHash("sha1").update(text).digest("hex").slice(0, 12)}`;
      this.statementNames.set(text, name);
    }
    return name;
  }

  /**
   * Runs `fn` inside `BEGIN … COMMIT` on one pool client, as an in-flight call (close() waits for
   * it); on an error the transaction is rolled back (a client whose ROLLBACK fails is discarded)
   * and the error rethrown, translated. The schedule store's compare-and-set runs here.
   */
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.track(async () => {
      const client = await this.pool.connect();
      let broken = false;
      try {
        await client.query("BEGIN");
        try {
          const result = await fn(client);
          await client.query("COMMIT");
          return result;
        } catch (err) {
          await client.query("ROLLBACK").catch(() => {
            broken = true;
          });
          throw err;
        }
      } finally {
        client.release(broken);
      }
    });
  }

  /**
   * Runs `work` as an in-flight call: rejects with CLOSED at once after close, translates
   * driver errors, and lets close() wait for it. (pg-pool's `end()` silently drops requests
   * still waiting for a connection, which would leave them pending forever.)
   */
  async track<T>(work: () => Promise<T>): Promise<T> {
    this.assertOpen();
    this.inflight += 1;
    try {
      return await work();
    } catch (err) {
      throw this.translate(err);
    } finally {
      this.inflight -= 1;
      if (this.inflight === 0 && this.idle) this.idle();
    }
  }

  /**
   * Marks the connection closed, runs `beforeEnd` (stopping the listener), waits for the calls
   * in flight to settle, then ends the pool. Idempotent.
   */
  close(beforeEnd: () => Promise<void>): Promise<void> {
    if (!this.closing) {
      this.closedFlag = true;
      const settled =
        this.inflight === 0
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              this.idle = resolve;
            });
      this.closing = (async () => {
        await beforeEnd();
        await settled;
        await this.pool.end();
      })();
    }
    return this.closing;
  }
}

/** What the job store needs from the facade. */
export interface PgJobStoreDeps {
  /** The pool. */
  conn: PgConnection;
  /** The schema's statements. */
  sql: Statements;
  /** The NOTIFY channel (a parameter of the notifying statements). */
  channel: string;
  /** Wakes this process's subscribers for a queue. */
  wake: (queue: string) => void;
  /**
   * Claims from the queues that have a `max_running` (limited-claim.ts), after the ordinary
   * claim statements, which skip those queues. → claimed rows.
   */
  claimLimited: (request: {
    workerId: string;
    limit: number;
    queues: readonly string[] | null;
  }) => Promise<RawClaimedRow[]>;
}
