/**
 * The SQLite backend facade: the {@link Backend} contract over one database file, each store
 * method passed to its entity store (job-store.ts, worker-store.ts, lease-store.ts,
 * schedule-store.ts), as on the other backends. The connection, its pragmas and its lock waits
 * live in connection.ts.
 */
import type { Backend, Capabilities, Notifier } from "../contract/index.js";
import { DelegatingStores } from "../shared/delegating-stores.js";
import { LocalHandOffDesk } from "../shared/hand-off-desk.js";
import { loadMigrations } from "../shared/migrations.js";
import { WakeBus } from "../shared/wake-bus.js";
import { SqliteAdminStore } from "./admin-store.js";
import { isInMemoryPath, SqliteConnection } from "./connection.js";
import { SqliteFlowStore } from "./flow-store.js";
import { SqliteJobStore } from "./job-store.js";
import { SqliteLeaseStore } from "./lease-store.js";
import { migrate } from "./migrate.js";
import { type SqliteBackendOptions, validateOptions } from "./options.js";
import { SqliteScheduleStore } from "./schedule-store.js";
import { SqliteSubmissionStore } from "./submission-store.js";
import { insertJobs } from "./transactions.js";
import { SqliteWorkerStore } from "./worker-store.js";

export { DEFAULT_SQLITE_BUSY_TIMEOUT_MS, type SqliteBackendOptions } from "./options.js";

/**
 * The SQLite backend: one database file shared by every process that opens it, through
 * better-sqlite3 (synchronous; each method still returns a promise, as the {@link Backend}
 * contract asks). Each method's semantics are in `backends/contract/`; the comments here say
 * only what is specific to SQLite.
 *
 * Storage (migrations under `migrations/`): tables `soniq_jobs` (live jobs: queued,
 * processing), `soniq_finished_jobs` (done, cancelled, until their retention passes),
 * `soniq_dedup_keys`, `soniq_dead_letter_jobs`, `soniq_workers`, `soniq_leases`,
 * `soniq_migrations`, and the operations, schedule and remote-job tables. Times are INTEGER **milliseconds** since
 * the epoch taken from SQLite's clock (docs/backends.md, "Time") and read back as `Date`;
 * durations passed in are **seconds**. Arguments and results are stored as the given JSON text,
 * byte for byte.
 *
 * Connection settings: `journal_mode=WAL` (readers never block the writer),
 * `synchronous=NORMAL`, a 20 ms `busy_timeout` per statement retried up to
 * {@link SqliteBackendOptions.busyTimeoutMs}. Every
 * write that reads before it writes runs in a `BEGIN IMMEDIATE` transaction, so several worker
 * processes on one file claim each job exactly once; a lock not obtained within the busy
 * timeout surfaces as the driver's `SQLITE_BUSY` error (never swallowed).
 *
 * Wake-ups are **in-process only** (`capabilities.crossProcessWake` is false: SQLite has no
 * cross-process notification; other processes poll): this object's own enqueue, NACK, replay,
 * recovery, and retry or snooze with a delay of 0 call its subscribers in a microtask.
 *
 * Errors common to every method: `SoniqError("CLOSED")` after {@link SqliteBackend.close};
 * `SoniqError("SCHEMA_NOT_READY")` when the file or tables are missing (run `soniq setup`, i.e.
 * {@link SqliteBackend.setup}), and from `workerRegister` when the file's newest applied migration
 * is older than this build's; otherwise the driver's `SqliteError`.
 */
export class SqliteBackend extends DelegatingStores implements Backend {
  /** `"sqlite"`; `"memory"` for a {@link MemoryBackend} (this class on an in-memory database). */
  readonly kind: "sqlite" | "memory" = "sqlite";
  /** The database path exactly as given in {@link SqliteBackendOptions.path}. */
  readonly path: string;
  /** The busy timeout in milliseconds this connection uses. */
  readonly busyTimeoutMs: number;
  /** No transactional enqueue; wake-ups stay in this process; durable unless `":memory:"`. */
  readonly capabilities: Capabilities;

  private readonly conn: SqliteConnection;
  /** Remote jobs' submission records (contract/submission-store.ts). */
  readonly submissions: SqliteSubmissionStore;
  /** Workflows (contract/flow-store.ts). */
  readonly flows: SqliteFlowStore;
  private readonly bus: WakeBus;
  /**
   * Hand-off at enqueue (contract/hand-off.ts): a pool enqueue of one job due now, with a worker
   * of this process idle on its queue, is inserted already claimed by it (transactions.ts
   * `insertHandedOff`), one transaction instead of two.
   */
  readonly handOff: LocalHandOffDesk;
  /** The operations store (contract/admin-store.ts) on this connection. */
  readonly admin: SqliteAdminStore;

  /**
   * Validates the options (options.ts); the file is opened on first use. Does not create the
   * schema: call {@link SqliteBackend.setup}.
   * @param clock Internal, for {@link MemoryBackend}: the database clock (milliseconds since the
   * epoch) of an in-memory database.
   * @throws SoniqError `INVALID_OPTION` (see `validateOptions`). Opening errors (e.g. `EACCES`,
   * `SQLITE_NOTADB`) surface from the first call.
   */
  constructor(options: SqliteBackendOptions, clock?: () => number) {
    const { path, busyTimeoutMs } = validateOptions(options);
    const conn = new SqliteConnection(path, busyTimeoutMs, clock);
    const bus = new WakeBus();
    const wake = (queue: string) => bus.wake(queue);
    const handOff = new LocalHandOffDesk();
    super({
      jobs: new SqliteJobStore(conn, wake, handOff),
      workers: new SqliteWorkerStore(conn),
      leases: new SqliteLeaseStore(conn),
      schedules: new SqliteScheduleStore({
        use: (fn) => conn.use(fn),
        insertJobs: (session, jobs) => insertJobs(session, jobs),
        wake,
      }),
    });
    this.path = path;
    this.busyTimeoutMs = busyTimeoutMs;
    this.capabilities = {
      transactionalEnqueue: false,
      crossProcessWake: false,
      durable: !isInMemoryPath(path),
    };
    this.conn = conn;
    this.bus = bus;
    this.handOff = handOff;
    this.admin = new SqliteAdminStore(conn, wake);
    this.submissions = new SqliteSubmissionStore(conn, wake);
    this.flows = new SqliteFlowStore(conn, wake);
  }

  /** This object's in-process wake-ups (see the class comment). */
  get notifier(): Notifier {
    return this.bus;
  }

  /**
   * Creates the file when missing and applies every migration not yet recorded, in one
   * `BEGIN IMMEDIATE` transaction (migrate.ts). See {@link Backend.setup}.
   */
  async setup(): Promise<void> {
    await this.conn.use(({ db }) => migrate(db, loadMigrations("sqlite")), true);
  }

  /** Closes the connection. See {@link Backend.close}. */
  async close(): Promise<void> {
    this.handOff.close();
    this.bus.close();
    this.conn.close();
  }

  /** The database's current time (millisecond precision). See {@link Backend.now}. */
  async now(): Promise<Date> {
    return this.conn.use((s) => new Date(s.nowMs()));
  }
}
