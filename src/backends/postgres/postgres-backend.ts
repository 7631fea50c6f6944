/**
 * The PostgreSQL backend facade: the production engine (docs/backends.md). Claims with
 * `FOR UPDATE SKIP LOCKED`, wakes workers with LISTEN/NOTIFY, enqueues a batch in one round
 * trip (optionally inside the caller's transaction) and decides every time by the database
 * clock. Tables live in one configurable schema, created by versioned migrations (`setup()`).
 * The pool is connection.ts, the stores job-store.ts, worker-store.ts and lease-store.ts, the
 * wake-ups notifier.ts.
 */
import { SoniqError } from "../../errors.js";
import { CANCEL_NOTIFY_PREFIX } from "../contract/admin-store.js";
import type { Backend, Capabilities, Notifier } from "../contract/index.js";
import { DelegatingStores } from "../shared/delegating-stores.js";
import { LocalHandOffDesk } from "../shared/hand-off-desk.js";
import { PgAdminStore } from "./admin-store.js";
import { PgConnection } from "./connection.js";
import { PgFinishNotices } from "./finish-notices.js";
import { buildFlowStatements } from "./flow-sql.js";
import { PgFlowStore } from "./flow-store.js";
import { buildHandOffStatements } from "./hand-off-sql.js";
import { notifyChannel, validateSchemaName } from "./identifiers.js";
import { PgJobStore } from "./job-store.js";
import { PgLeaseStore } from "./lease-store.js";
import { migrate } from "./migrate.js";
import { PgNotifier } from "./notifier.js";
import { PgScheduleStore } from "./schedule-store.js";
import { buildAdminStatements, buildStatements, type Statements } from "./sql.js";
import { buildSubmissionStatements } from "./submission-sql.js";
import { PostgresSubmissionStore } from "./submission-store.js";
import { PgWorkerStore } from "./worker-store.js";

/** Where a connection error came from, for {@link PostgresBackendOptions.onError}. */
export type PostgresErrorSource = "pool" | "listener";

/**
 * What sits between the pool and PostgreSQL: `"none"` (direct, or a session-mode pooler) or
 * `"transaction"` (a transaction-mode pooler such as PgBouncer `pool_mode = transaction`, which
 * hands each transaction to any of its server connections). docs/backends.md, "PostgreSQL
 * connections".
 */
export type PostgresPooler = "none" | "transaction";

/** Options of {@link PostgresBackend}. */
export interface PostgresBackendOptions {
  /** `postgres://…` connection string. */
  connectionString: string;
  /**
   * Schema holding Soniq's tables; must match `/^[a-z_][a-z0-9_]{0,62}$/`. Created by
   * `setup()` when missing.
   */
  schema: string;
  /** Most connections the pool opens at once (an integer >= 1); the LISTEN connection is extra. */
  poolSize: number;
  /**
   * Called with connection errors the backend recovers from by itself: an idle pool connection
   * that died, or the LISTEN connection failing (it re-connects). Defaults to ignoring them.
   */
  onError?: (error: unknown, source: PostgresErrorSource) => void;
  /**
   * Called with the channel when the LISTEN connection drops (`"lost"`, with the error that ended
   * it, if any) and when it is back and re-LISTENed (`"restored"`). Defaults to ignoring them.
   */
  onListenChange?: (change: "lost" | "restored", channel: string, error?: unknown) => void;
  /**
   * `"transaction"` when `connectionString` goes through a transaction-mode pooler: the pool then
   * keeps no session state (no planner settings, no named prepared statements, no server process
   * ids, so no cancel by process id and no skipping of its own NOTIFYs), and LISTEN runs on
   * {@link listenUrl} — or not at all (polling only) when that is not given. Default `"none"`.
   */
  pooler?: PostgresPooler;
  /**
   * `postgres://…` URL of the dedicated LISTEN connection, straight to PostgreSQL. Default:
   * `connectionString`, or no LISTEN connection (wake-ups from other processes only by the
   * workers' polling) when {@link pooler} is `"transaction"`.
   */
  listenUrl?: string;
}

/** Validates the options that the pool and schema need. */
function validate(options: PostgresBackendOptions): string {
  if (typeof options.connectionString !== "string" || options.connectionString.length === 0) {
    throw new SoniqError("INVALID_OPTION", "the PostgreSQL connection string is empty", {
      details: { option: "connectionString" },
    });
  }
  if (!Number.isInteger(options.poolSize) || options.poolSize < 1) {
    throw new SoniqError(
      "INVALID_OPTION",
      `poolSize must be an integer >= 1, got ${String(options.poolSize)}`,
      { details: { option: "poolSize" } },
    );
  }
  if (
    options.pooler !== undefined &&
    options.pooler !== "none" &&
    options.pooler !== "transaction"
  ) {
    throw new SoniqError(
      "INVALID_OPTION",
      `pooler must be "none" or "transaction", got ${JSON.stringify(options.pooler)}`,
      { details: { option: "pooler" } },
    );
  }
  if (
    options.listenUrl !== undefined &&
    (typeof options.listenUrl !== "string" || !/^postgres(ql)?:\/\//i.test(options.listenUrl))
  ) {
    throw new SoniqError("INVALID_OPTION", "listenUrl must be a postgres:// URL", {
      details: { option: "listenUrl" },
    });
  }
  return validateSchemaName(options.schema);
}

/**
 * PostgreSQL implementation of the {@link Backend} contract (each method's semantics: see
 * `backends/contract/`). Specific to this backend:
 * - All tables are in {@link PostgresBackendOptions.schema}; runtime SQL is schema-qualified.
 * - Wake-ups travel on the channel `soniq_<schema>` (or `soniq_<md5(schema)>` for long names),
 *   payload = the queue name: an insert trigger NOTIFYs for due jobs (also at the commit of a
 *   transactional enqueue); nack, retry/snooze with delay <= 0, replay and recovery NOTIFY as
 *   well. The pool's own such writes also wake this process's subscribers directly (no NOTIFY
 *   round trip), and the listener skips the echo of such a write among the notifications sent
 *   by the pool's connections (notifier.ts, OWN_ECHO_MS), so one write wakes a local worker
 *   once, while a release by a workflow trigger still wakes it (behind a transaction-mode pooler
 *   it skips none). A release made by one of the pool's own statements wakes this process right
 *   after that statement, from the release's NOTICE (migration 026), without waiting for it.
 * - {@link PostgresBackendOptions.pooler} `"transaction"`: no session state on the pool (no
 *   planner settings, unnamed statements, no server process ids, so no cancel by process id);
 *   LISTEN on {@link PostgresBackendOptions.listenUrl}, or none (polling only).
 * - Hand-off at enqueue (contract/hand-off.ts): a pool enqueue of one job due now, with a worker
 *   of this process idle on its queue ({@link handOff}), inserts the row already claimed by that
 *   worker when its queue has no due backlog; such a row NOTIFYs nobody.
 * - After {@link close}, every call rejects at once with `SoniqError("CLOSED")`.
 * - A missing schema or table rejects with `SoniqError("SCHEMA_NOT_READY")`: run `soniq setup`;
 *   so does `workerRegister` on a schema whose newest applied migration is older than this
 *   build's (docs/backends.md, "The upgrade").
 */
export class PostgresBackend extends DelegatingStores implements Backend {
  /** Always `"postgres"`. */
  readonly kind = "postgres" as const;
  /**
   * Transactional enqueue, durable; cross-process wake-ups (LISTEN/NOTIFY) unless a
   * transaction-mode pooler without a `listenUrl` leaves only polling.
   */
  readonly capabilities: Capabilities;
  /** The validated schema name. */
  readonly schema: string;
  /** The NOTIFY/LISTEN channel of {@link schema}. */
  readonly channel: string;
  private readonly conn: PgConnection;
  private readonly wakeUps: PgNotifier;
  private readonly sql: Statements;
  /** The operations store (contract/admin-store.ts), on the same pool. */
  readonly admin: PgAdminStore;
  /** Remote jobs' submission records (contract/submission-store.ts). */
  readonly submissions: PostgresSubmissionStore;
  /** Workflows (contract/flow-store.ts). */
  readonly flows: PgFlowStore;
  /** This process's workers that take a job at enqueue (contract/hand-off.ts). */
  readonly handOff: LocalHandOffDesk;
  /**
   * Finish notices for `waitFor` (finish-notices.ts, migration 021): a wait registers, the
   * finishing statement NOTIFYs, the instance's one LISTEN connection hears it.
   */
  readonly finishNotices: PgFinishNotices;

  /**
   * Creates the backend; opens no connection until the first call.
   * @throws SoniqError `INVALID_OPTION` when the connection string is empty, the schema name
   * does not match `/^[a-z_][a-z0-9_]{0,62}$/`, `poolSize` is not an integer >= 1, `pooler` is
   * not `"none"` or `"transaction"`, or `listenUrl` is not a `postgres://` URL.
   */
  constructor(options: PostgresBackendOptions) {
    const schema = validate(options);
    const channel = notifyChannel(schema);
    const onError = options.onError ?? (() => undefined);
    const pooler = options.pooler ?? "none";
    // Through a transaction-mode pooler LISTEN would hold one server connection's session, which
    // the pooler gives to other clients after each transaction: only a direct URL can LISTEN.
    const listenUrl =
      options.listenUrl ?? (pooler === "transaction" ? null : options.connectionString);
    const conn = new PgConnection({
      connectionString: options.connectionString,
      schema,
      poolSize: options.poolSize,
      pooler,
      onPoolError: (err) => onError(err, "pool"),
      // A job a trigger released in one of the pool's statements (migration 026): wake this
      // process's claims now; its NOTIFY then arrives as the echo of this wake-up.
      onWakeNotice: (queue) => wakeUps.wake(queue),
    });
    let admin: PgAdminStore | undefined;
    let finishNotices: PgFinishNotices | undefined;
    const wakeUps = new PgNotifier({
      connectionString: listenUrl,
      channel,
      ownPids: conn.poolPids,
      onError: (err) => onError(err, "listener"),
      route: (payload) => admin?.handleNotify(payload) ?? false,
      isControl: (payload) => payload.startsWith(CANCEL_NOTIFY_PREFIX),
      routeAll: (payload) => finishNotices?.handleNotify(payload) ?? false,
      onListening: () => finishNotices?.recheck(),
      onListenChange: (change, error) => {
        if (change === "lost") finishNotices?.recheck();
        options.onListenChange?.(change, channel, error);
      },
    });
    finishNotices = new PgFinishNotices({
      schema,
      run: (text, values) => conn.run(text, values),
      openListen: () => wakeUps.open(),
      listening: () => wakeUps.listening,
    });
    const sql = buildStatements(schema);
    admin = new PgAdminStore({
      channel,
      sql: buildAdminStatements(schema),
      run: (text, values) => conn.run(text, values),
      wake: (queue) => wakeUps.wake(queue),
    });
    const handOff = new LocalHandOffDesk();
    const jobs = new PgJobStore({
      conn,
      sql,
      schema,
      channel,
      wake: (queue) => wakeUps.wake(queue),
      handOff: { desk: handOff, sql: buildHandOffStatements(schema) },
    });
    super({
      jobs,
      workers: new PgWorkerStore(conn, sql, schema),
      leases: new PgLeaseStore(conn, sql),
      schedules: new PgScheduleStore(sql, {
        query: (text, values) => conn.run(text, values),
        transaction: (fn) => conn.transaction(fn),
        insertJobs: (list, client) => jobs.jobEnqueue({ jobs: list, connection: client }),
        wake: (queue) => wakeUps.wake(queue),
      }),
    });
    this.capabilities = {
      transactionalEnqueue: true,
      crossProcessWake: listenUrl !== null,
      durable: true,
    };
    this.admin = admin;
    this.finishNotices = finishNotices;
    this.handOff = handOff;
    this.schema = schema;
    this.channel = channel;
    this.conn = conn;
    this.wakeUps = wakeUps;
    this.sql = sql;
    this.flows = new PgFlowStore({
      conn,
      sql: buildFlowStatements(schema),
      insertJobs: (list, client) => jobs.jobEnqueue({ jobs: list, connection: client }),
      wake: (queue) => wakeUps.wake(queue),
    });
    this.submissions = new PostgresSubmissionStore({
      conn,
      sql: buildSubmissionStatements(schema),
      wake: (queue) => wakeUps.wake(queue),
    });
  }

  /** LISTEN/NOTIFY wake-ups; the first subscription opens the LISTEN connection. */
  get notifier(): Notifier {
    return this.wakeUps;
  }

  /**
   * Creates the schema if needed and applies pending migrations (migrate.ts), serialised across
   * processes by an advisory lock. See {@link Backend.setup}.
   * @throws Driver errors (e.g. missing privileges) as thrown.
   */
  async setup(): Promise<void> {
    await this.conn.track(() => migrate(this.conn.pool, this.schema));
  }

  /**
   * Stops the LISTEN connection, waits for the calls already in flight to settle, then ends the
   * pool; a `waitFor` in progress rejects with `CLOSED`. See {@link Backend.close}.
   */
  close(): Promise<void> {
    this.handOff.close();
    const closing = this.conn.close(() => this.wakeUps.close());
    // Waits read once more and meet CLOSED, instead of waiting for a notice that cannot come.
    this.finishNotices.recheck();
    return closing;
  }

  /** The database's `now()`. */
  async now(): Promise<Date> {
    const { rows } = await this.conn.run<{ now: Date }>(this.sql.now, []);
    const row = rows[0];
    if (!row) throw new Error("SELECT now() returned no row");
    return row.now;
  }
}
