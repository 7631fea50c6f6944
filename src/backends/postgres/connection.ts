/**
 * The PostgreSQL backend's connection pool and call tracking: named prepared statements, the
 * open/closed guard, driver-error translation (CLOSED, SCHEMA_NOT_READY), the pool's server
 * process ids (so the listener can skip this process's own NOTIFYs) and a close that waits for
 * calls in flight. Behind a transaction-mode pooler (`pooler: "transaction"`) none of the session
 * state: plain statements, no session settings, no process ids (so no cancel by process id).
 */
import { createHash } from "node:crypto";
import { connect as connectTcp } from "node:net";
import pg from "pg";
import { SoniqError } from "../../errors.js";
import type { PgQueryable } from "../contract/index.js";
import type { LocalHandOffDesk } from "../shared/hand-off-desk.js";
import { checkOut } from "./checkout.js";
import type { HandOffStatements } from "./hand-off-sql.js";
import { SESSION_SETUP, type Statements } from "./sql.js";

/** SQLSTATEs meaning the schema or a table is missing: undefined_table, invalid_schema_name. */
const MISSING_SCHEMA_CODES = new Set(["42P01", "3F000"]);

/**
 * SQLSTATEs of a text parameter PostgreSQL cannot hold (U+0000): character_not_in_repertoire
 * (`invalid byte sequence for encoding "UTF8": 0x00`) and untranslatable_character.
 */
const UNSTORABLE_TEXT_CODES = new Set(["22021", "22P05"]);

/**
 * SQLSTATEs of a prepared statement that is not where the pool left it — duplicate_prepared_statement,
 * invalid_sql_statement_name: what named statements get behind a transaction-mode pooler that
 * Soniq was not told about.
 */
const PREPARED_STATEMENT_CODES = new Set(["42P05", "26000"]);

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
  /**
   * `"transaction"`: `connectionString` goes through a transaction-mode pooler, which hands each
   * transaction to any of its server connections (shared with its other clients): no
   * `SESSION_SETUP`, unnamed statements, no server process ids. Default `"none"`.
   */
  pooler?: "none" | "transaction";
  /**
   * Called with the queue (or `"*"`) of each job a trigger released in a statement on one of the
   * pool's connections (the release's NOTICE, migration 026: `soniq:wake:<queue>`), once that
   * connection is back in the pool — after the statement, or its transaction, ended. Not behind a
   * transaction-mode pooler (no session setup asks for the notices there).
   */
  onWakeNotice?: (queue: string) => void;
}

/** The message of a release's NOTICE (migration 026) before the queue's name. */
export const WAKE_NOTICE_PREFIX = "soniq:wake:";

/** The pool every PostgreSQL store runs its statements on. */
export class PgConnection {
  /**
   * Server process ids of this pool's connections. A NOTIFY sent from one of them was caused by
   * this backend's own write, which already woke this process's subscribers directly (right
   * after the write returned); the listener skips it, so one write wakes a local worker once.
   * Every pool statement that NOTIFYs therefore wakes locally as well. Always empty behind a
   * transaction-mode pooler: there a process id names a server connection that serves other
   * clients' transactions too (their NOTIFYs must not be skipped, their statements not cancelled).
   */
  readonly poolPids = new Set<number>();
  /** Whether the pool goes through a transaction-mode pooler (see {@link PgConnectionOptions}). */
  readonly behindPooler: boolean;
  /** The underlying pool (migrations take it whole). */
  readonly pool: pg.Pool;
  private readonly schema: string;
  private readonly clientPids = new WeakMap<object, number>();
  private readonly statementNames = new Map<string, string>();
  private closedFlag = false;
  private closing: Promise<void> | null = null;
  /** Calls using the pool right now; close() waits for them before ending the pool. */
  private inflight = 0;
  /** The pool's connections checked out right now (a statement or transaction on each). */
  private readonly busy = new Set<pg.PoolClient>();
  /** Every connection of the pool (checked out or idle). */
  private readonly clients = new Set<pg.PoolClient>();
  private idle: (() => void) | null = null;
  /** Queues named by release notices on a checked-out connection, woken when it comes back. */
  private readonly wakeNotices = new WeakMap<object, Set<string>>();

  /** Creates the pool; opens no connection until the first call. */
  private readonly connectionString: string;
  private readonly onPoolError: (error: unknown) => void;

  constructor(options: PgConnectionOptions) {
    this.schema = options.schema;
    this.connectionString = options.connectionString;
    this.onPoolError = options.onPoolError;
    this.behindPooler = options.pooler === "transaction";
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
      // Not behind a transaction-mode pooler: the settings would stay on one server connection the
      // pooler shares with other clients, and its process id changes with every transaction.
      onConnect: async (client) => {
        if (this.behindPooler) return;
        const onWakeNotice = options.onWakeNotice;
        if (onWakeNotice) {
          client.on("notice", (notice) => {
            const text = notice.message;
            if (typeof text !== "string" || !text.startsWith(WAKE_NOTICE_PREFIX)) return;
            const queue = text.slice(WAKE_NOTICE_PREFIX.length);
            const queues = this.wakeNotices.get(client);
            if (queues) queues.add(queue);
            else this.wakeNotices.set(client, new Set([queue]));
          });
        }
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
    this.pool.on("connect", (client) => this.clients.add(client as pg.PoolClient));
    this.pool.on("remove", (client) => {
      this.busy.delete(client as pg.PoolClient);
      this.clients.delete(client as pg.PoolClient);
      const pid = this.clientPids.get(client);
      if (pid !== undefined) this.poolPids.delete(pid);
    });
    this.pool.on("acquire", (client) => this.busy.add(client));
    this.pool.on("release", (_err, client) => {
      this.busy.delete(client);
      // pg-pool emits this before the statement's caller gets its answer: the released jobs'
      // queues are woken right after their commit (a rolled-back transaction's wake-up only
      // costs a claim that finds nothing).
      const queues = this.wakeNotices.get(client);
      if (queues === undefined || queues.size === 0) return;
      this.wakeNotices.delete(client);
      for (const queue of queues) options.onWakeNotice?.(queue);
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

  /**
   * Maps driver errors to Soniq's codes (CLOSED, INVALID_INPUT, SCHEMA_NOT_READY, and
   * DATABASE_ERROR naming the `pooler` setting when named statements meet a transaction-mode
   * pooler); others pass through.
   */
  private translate(err: unknown): unknown {
    if (this.closedFlag) {
      return new SoniqError("CLOSED", "the PostgreSQL backend was closed during the call", {
        cause: err,
      });
    }
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code === "string" && UNSTORABLE_TEXT_CODES.has(code)) {
      // Text with U+0000 given as a parameter (an id, a name): PostgreSQL text cannot hold it,
      // so nothing stored can match it and nothing could store it. The caller's input, not the
      // server's failure.
      return new SoniqError(
        "INVALID_INPUT",
        "PostgreSQL text cannot hold U+0000 (a NUL character); no id, name or key contains one",
        { cause: err },
      );
    }
    if (!this.behindPooler && typeof code === "string" && PREPARED_STATEMENT_CODES.has(code)) {
      return new SoniqError(
        "DATABASE_ERROR",
        `${(err as Error).message}: Soniq's prepared statements moved between server connections, as behind a transaction-mode pooler (PgBouncer pool_mode = transaction); set pooler: "transaction" (SONIQ_POOLER=transaction), docs/backends.md`,
        { cause: err, details: { sqlstate: code } },
      );
    }
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
      // once per connection. A caller's client (transactional enqueue) gets plain queries, and so
      // does everything behind a transaction-mode pooler (a statement prepared on one server
      // connection is unknown on the next one the pooler picks).
      const result = via
        ? await via.query(text, values)
        : await this.pool.query(this.statement(text, values));
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    });
  }

  /**
   * Runs one statement on a connection of its own that `signal` can cancel: on abort, a
   * `pg_cancel_backend` for that connection's server process (sent on another connection; the
   * statement is rolled back unless it had finished). The connection goes back to the pool only
   * after the cancel was answered, so the cancel can never reach a later caller's statement.
   * Behind a transaction-mode pooler there is no cancel (the server process is shared with other
   * clients): an abort before the statement started still throws, a started statement runs to
   * its end and its rows are returned.
   * @throws the signal's reason when aborted before the statement ran; the driver's error (query
   * canceled, 57014) when the cancel stopped it.
   */
  async runCancellable<R>(
    text: string,
    values: unknown[],
    signal: AbortSignal,
  ): Promise<PgResult<R>> {
    return this.track(async () => {
      if (signal.aborted) throw signal.reason;
      const { client, release } = await checkOut(this.pool);
      let cancelled: Promise<unknown> = Promise.resolve();
      const cancel = () => {
        const pid = this.clientPids.get(client);
        if (pid === undefined) return;
        cancelled = this.pool.query("SELECT pg_cancel_backend($1)", [pid]).catch(() => undefined);
      };
      try {
        if (signal.aborted) throw signal.reason;
        signal.addEventListener("abort", cancel, { once: true });
        const result = await client.query(this.statement(text, values));
        return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
      } finally {
        signal.removeEventListener("abort", cancel);
        await cancelled;
        release();
      }
    });
  }

  /**
   * The query config of one of Soniq's statements: named (server-side prepared, parsed once per
   * connection) unless behind a transaction-mode pooler. Also for statements sent on a client of
   * this pool inside {@link transaction} (the keyed part of a limited queue's claim,
   * keyed-claim.ts).
   */
  statement(text: string, values: unknown[]): pg.QueryConfig {
    return this.behindPooler ? { text, values } : { name: this.statementName(text), text, values };
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
      const { client, release } = await checkOut(this.pool);
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
        release(broken);
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
   * Cancels the statements this pool's connections are running (best effort): by server process
   * id (`pg_cancel_backend`, on a connection of its own), or behind a transaction-mode pooler by
   * the protocol's cancel request for each checked-out connection, sent to the pooler with the
   * key it gave that client (PgBouncer passes it to the server connection the client is on).
   */
  private async cancelRunning(): Promise<void> {
    if (this.behindPooler) {
      await Promise.all([...this.busy].map((client) => sendCancelRequest(client)));
      return;
    }
    const pids = [...this.poolPids];
    if (pids.length === 0) return;
    const client = new pg.Client({
      connectionString: this.connectionString,
      connectionTimeoutMillis: 2000,
    });
    try {
      await client.connect();
      await client.query(
        "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid = ANY($1::int[]) AND state = 'active'",
        [pids],
      );
    } catch (err) {
      this.onPoolError(err);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /**
   * Ends the sockets of `clients` (calls on them fail, and are reported as CLOSED): what close()
   * does when a cancel did not end a call, or the pool's goodbye is not answered (a pooler or
   * server that no longer answers).
   */
  private abandon(clients: Iterable<pg.PoolClient>): void {
    for (const client of clients) {
      (
        client as unknown as { connection?: { stream?: { destroy(): void } } }
      ).connection?.stream?.destroy();
    }
  }

  /**
   * Marks the connection closed, runs `beforeEnd` (stopping the listener), waits for the calls
   * in flight to settle, then ends the pool. Calls still running {@link CLOSE_CANCEL_AFTER_MS} ms
   * after close began (a statement waiting for a lock another session holds) are cancelled
   * (`pg_cancel_backend`, or behind a transaction-mode pooler the protocol's cancel request
   * through the pooler), so a lock cannot hold a closing process; calls still running
   * {@link CLOSE_ABANDON_AFTER_MS} ms after that (a cancel that did not arrive: the pooler or
   * server does not answer) have their connections' sockets ended, and so do connections whose
   * goodbye is not answered within as long. So close() settles within about 1 + 2 + 5 + 5 s plus
   * the listener's stop bound, whatever the server or pooler does. Idempotent.
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
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<"late">((resolve) => {
          timer = setTimeout(() => resolve("late"), CLOSE_CANCEL_AFTER_MS);
        });
        if ((await Promise.race([settled, late])) === "late") {
          await this.cancelRunning();
          let abandonTimer: NodeJS.Timeout | undefined;
          const abandon = new Promise<"abandon">((resolve) => {
            abandonTimer = setTimeout(() => resolve("abandon"), CLOSE_ABANDON_AFTER_MS);
          });
          if ((await Promise.race([settled, abandon])) === "abandon") {
            this.abandon(this.busy);
            await settled;
          }
          clearTimeout(abandonTimer);
        }
        clearTimeout(timer);
        // The goodbye (Terminate) waits for the other side to close each socket: bounded too.
        const ended = this.pool.end();
        let endTimer: NodeJS.Timeout | undefined;
        const slow = new Promise<"slow">((resolve) => {
          endTimer = setTimeout(() => resolve("slow"), CLOSE_ABANDON_AFTER_MS);
        });
        if ((await Promise.race([ended, slow])) === "slow") {
          this.abandon(this.clients);
          await ended;
        }
        clearTimeout(endTimer);
      })();
    }
    return this.closing;
  }
}

/** How long close() waits for calls in flight before it cancels them, in milliseconds. */
const CLOSE_CANCEL_AFTER_MS = 1000;

/** How long close() waits after the cancel before it ends the sockets of calls still running, in ms. */
const CLOSE_ABANDON_AFTER_MS = 5000;

/** How long one cancel request may take to be sent, in milliseconds. */
const CANCEL_REQUEST_TIMEOUT_MS = 2000;

/**
 * Sends the protocol's CancelRequest for `client`'s running statement on a new socket to the
 * host and port it is connected to, with the process id and secret key its server (or pooler)
 * gave it; resolves once the other side closed the socket (the request was handled) or it failed
 * (never rejects; bounded by {@link CANCEL_REQUEST_TIMEOUT_MS}).
 */
function sendCancelRequest(client: pg.PoolClient): Promise<void> {
  const { processID, secretKey, host, port } = client as unknown as {
    processID: number | null;
    secretKey: number | null;
    host: string;
    port: number;
  };
  if (processID === null || secretKey === null) return Promise.resolve();
  const request = Buffer.alloc(16);
  request.writeInt32BE(16, 0);
  request.writeInt32BE(80877102, 4); // the cancel request code
  request.writeInt32BE(processID, 8);
  request.writeInt32BE(secretKey, 12);
  return new Promise((resolve) => {
    const socket = host.startsWith("/")
      ? connectTcp(`${host}/.s.PGSQL.${port}`)
      : connectTcp(port, host);
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, CANCEL_REQUEST_TIMEOUT_MS);
    socket.on("error", done);
    socket.on("close", done);
    // Sent, then the socket is left open until the other side closes it: PgBouncer (1.18) drops a
    // cancel whose sender hangs up before it has passed the request on.
    socket.on("connect", () => socket.write(request));
  });
}

/** What the job store needs from the facade. */
export interface PgJobStoreDeps {
  /** The pool. */
  conn: PgConnection;
  /** The schema's statements. */
  sql: Statements;
  /** The schema (validated), for the partition maintenance's DDL. */
  schema: string;
  /** The NOTIFY channel (a parameter of the notifying statements). */
  channel: string;
  /** Wakes this process's subscribers for a queue. */
  wake: (queue: string) => void;
  /** Hand-off at enqueue (hand-off-enqueue.ts): this process's idle workers and the statement. */
  handOff?: { desk: LocalHandOffDesk; sql: HandOffStatements };
}
