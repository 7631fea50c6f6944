/**
 * The SQLite backend's one connection: opened on first use with its pragmas, statements of the
 * catalogue (sql.ts) prepared once, lock waits retried without blocking the event loop, the
 * driver's "no such table" turned into `SCHEMA_NOT_READY`, and a file that cannot be opened or
 * written into `DATABASE_UNREACHABLE` naming it ({@link sqliteFileError}).
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { SoniqError } from "../../errors.js";
import { loadMigrations } from "../shared/migrations.js";
import { NOW_MS } from "./clock.js";
import { migrate } from "./migrate.js";
import { SQL, type StatementName } from "./sql.js";

/** Milliseconds one statement may wait inside SQLite for a lock before yielding to the event loop. */
const BUSY_SLICE_MS = 20;

/** Longest pause, in milliseconds, between two tries of a call that found the database busy. */
const MAX_RETRY_PAUSE_MS = 50;

/** SQLITE_BUSY / SQLITE_LOCKED (and their extended codes): another connection holds the lock. */
function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
  );
}

/** What a unit of work run by {@link SqliteConnection.use} may touch. */
export interface SqliteSession {
  /** The open database (for migrations, which run their own statements). */
  readonly db: Database.Database;
  /** The catalogue statement `name`, prepared once per connection. */
  statement(name: StatementName): Database.Statement;
  /** Runs `fn` in one `BEGIN IMMEDIATE` transaction (all or nothing) and returns its result. */
  immediate<T>(fn: () => T): T;
  /** The database clock, in milliseconds since the epoch. */
  nowMs(): number;
}

/** Driver codes (with their extended forms) for a file the process cannot open or write. */
const FILE_ACCESS_CODES = ["SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PERM"];

/**
 * Node's codes when creating the file's parent directories is refused (`ENOENT` too: a file
 * system such as /proc answers it for a directory whose parent exists).
 */
const DIRECTORY_ACCESS_CODES = new Set(["EACCES", "EPERM", "EROFS", "ENOENT"]);

/**
 * Creates the missing directories of `dir`, one level at a time from its nearest existing
 * ancestor. Not `mkdirSync(dir, { recursive: true })`: on a file system that answers `ENOENT` for
 * a directory whose parent exists (/proc), Node's recursive mkdir retries for ever.
 * @throws Node's error of the level that could not be made (`EACCES`, `EPERM`, `EROFS`, `ENOENT`).
 */
export function makeDirectories(dir: string): void {
  const missing: string[] = [];
  let at = resolve(dir);
  while (!existsSync(at)) {
    missing.push(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const level of missing.reverse()) {
    try {
      mkdirSync(level);
    } catch (err) {
      // Made meanwhile by another process sharing the file: fine.
      if ((err as { code?: unknown }).code !== "EEXIST") throw err;
    }
  }
}

/**
 * Translates an error from opening or writing the SQLite file at `path` (the driver's
 * `SQLITE_CANTOPEN`, `SQLITE_READONLY`, `SQLITE_PERM` and their extended codes; `EACCES`, `EPERM`,
 * `EROFS`, `ENOENT` from creating its parent directories) into a `DATABASE_UNREACHABLE` SoniqError whose
 * message names the absolute path and the likely cause; the driver's own message ("unable to
 * open database file") names neither. The original error is the `cause`.
 * @param err What the driver (or {@link makeDirectories}) threw.
 * @param path The database path as given; the message resolves it against the working directory.
 * @returns The SoniqError, or `undefined` when `err` is not one of those.
 */
export function sqliteFileError(err: unknown, path: string): SoniqError | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return undefined;
  const driver = FILE_ACCESS_CODES.some((c) => code === c || code.startsWith(`${c}_`));
  if (!driver && !DIRECTORY_ACCESS_CODES.has(code)) return undefined;
  const absolute = resolve(path);
  const detail = err instanceof Error ? err.message : code;
  return new SoniqError(
    "DATABASE_UNREACHABLE",
    `the SQLite database ${absolute} cannot be opened or written (${detail}): check that the file and its directory are writable by this process (a read-only file, directory or file system, or missing permissions); SQLite also creates ${absolute}-wal and ${absolute}-shm beside it`,
    { cause: err, details: { path: absolute, driverCode: code } },
  );
}

/** The SQL function an injected clock answers through (see {@link SqliteConnection}). */
const CLOCK_FUNCTION = "soniq_clock_ms";

/** Whether `path` names a private in-memory database rather than a file. */
export function isInMemoryPath(path: string): boolean {
  return path === ":memory:";
}

/**
 * One better-sqlite3 connection to {@link SqliteConnection.path}, with `journal_mode=WAL`,
 * `synchronous=NORMAL` and a {@link BUSY_SLICE_MS} ms `busy_timeout` per statement.
 *
 * An in-memory database (`":memory:"`) lives as long as this one connection and is migrated when
 * it opens: there is no file to set up first, and no other connection could see it.
 *
 * With a `clock`, the database's "now" is that function (milliseconds since the epoch) instead of
 * SQLite's `unixepoch('subsec')`: every catalogue statement is prepared with {@link NOW_MS}
 * replaced by a call to it. For `MemoryBackend({ clock })` (tests that move time forward);
 * read once per use in a statement, so a clock that moves only when told keeps one statement on
 * one instant.
 */
export class SqliteConnection implements SqliteSession {
  private open: Database.Database | null = null;
  private closed = false;
  private readonly prepared = new Map<StatementName, Database.Statement>();
  private control: {
    begin: Database.Statement;
    commit: Database.Statement;
    rollback: Database.Statement;
  } | null = null;

  /**
   * @param path The database file (or `":memory:"`), as the backend was given it.
   * @param busyTimeoutMs How long, in milliseconds, a call retries a busy database.
   * @param clock The database clock in milliseconds since the epoch; SQLite's own when omitted.
   */
  constructor(
    readonly path: string,
    readonly busyTimeoutMs: number,
    private readonly clock?: () => number,
  ) {}

  /** The open database; only valid inside {@link use}. */
  get db(): Database.Database {
    return this.connect(false);
  }

  /**
   * The connection, opened on first use. Only `create` (setup) creates a missing file and its
   * parent directories; anything else on a missing file is `SCHEMA_NOT_READY`, so a typo in a
   * path never leaves empty databases behind.
   */
  private connect(create: boolean): Database.Database {
    if (this.closed) throw new SoniqError("CLOSED", `the SQLite backend (${this.path}) is closed`);
    if (this.open) return this.open;
    const inMemory = isInMemoryPath(this.path);
    if (!inMemory && !create && !existsSync(this.path)) {
      throw new SoniqError(
        "SCHEMA_NOT_READY",
        `there is no SQLite database at ${resolve(this.path)}: run \`soniq setup\` to create it`,
      );
    }
    let db: Database.Database;
    try {
      if (!inMemory) makeDirectories(dirname(resolve(this.path)));
      db = new Database(this.path, { timeout: BUSY_SLICE_MS });
    } catch (err) {
      throw sqliteFileError(err, this.path) ?? err;
    }
    try {
      db.pragma(`busy_timeout = ${BUSY_SLICE_MS}`);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      // Workflows (migration 015): a dependant dead-lettered by a trigger ends its own edges,
      // which fires the same triggers again (a cascade down the flow).
      db.pragma("recursive_triggers = ON");
      const clock = this.clock;
      if (clock) db.function(CLOCK_FUNCTION, () => Math.round(clock()));
      if (inMemory) migrate(db, loadMigrations("sqlite"));
    } catch (err) {
      db.close();
      if ((err as { code?: unknown }).code === "SQLITE_NOTADB") {
        throw new SoniqError(
          "NOT_A_DATABASE",
          `${resolve(this.path)} is not a SQLite database: point SONIQ_DATABASE_URL (or --database-url) at a Soniq database file`,
          { cause: err },
        );
      }
      throw sqliteFileError(err, this.path) ?? err;
    }
    this.open = db;
    return db;
  }

  /**
   * Runs `fn` on the connection. better-sqlite3 is synchronous, so a lock held by another process
   * must not block this one's event loop (signals, timers, heartbeats): each statement waits at
   * most {@link BUSY_SLICE_MS} ms inside SQLite, and a busy database is retried here,
   * asynchronously, until `busyTimeoutMs` has passed. `fn` must be all-or-nothing (one statement
   * or one transaction), which makes the retry safe.
   * @param create Whether a missing database file may be created (setup only).
   * @param signal Aborting it stops the retries of a busy database: the call rejects with its
   * reason, and nothing of `fn` was done.
   * @throws SoniqError `CLOSED` after close; `SCHEMA_NOT_READY` for a missing table or file;
   * `DATABASE_UNREACHABLE` for a file (or directory) that cannot be opened or written;
   * `SQLITE_BUSY` from the driver once `busyTimeoutMs` is spent.
   */
  async use<T>(
    fn: (session: SqliteSession) => T,
    create = false,
    signal?: AbortSignal,
  ): Promise<T> {
    const giveUpAt = Date.now() + this.busyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      // An abandoned call stops between tries: nothing of it was done.
      if (signal?.aborted) throw signal.reason;
      try {
        this.connect(create);
        return fn(this);
      } catch (err) {
        if (isBusy(err) && Date.now() < giveUpAt) {
          const wait = Math.min(MAX_RETRY_PAUSE_MS, 2 ** attempt) + Math.random() * 5;
          // Yield to the poll phase first. Each try may block up to BUSY_SLICE_MS inside SQLite; a
          // few callers retrying on short timers would keep Node's timers phase busy for as long
          // as the lock is held (each new timer is already due when the phase checks), starving
          // signals and I/O: a drain's SIGTERM went unseen until another process let go.
          await new Promise((resolve) => setImmediate(resolve));
          await new Promise((resolve) => setTimeout(resolve, wait));
          continue;
        }
        if (err instanceof Database.SqliteError && /no such table/i.test(err.message)) {
          throw new SoniqError(
            "SCHEMA_NOT_READY",
            `the Soniq schema is missing in ${this.path} (${err.message}): run \`soniq setup\``,
            { cause: err },
          );
        }
        if (err instanceof SoniqError) throw err;
        throw sqliteFileError(err, this.path) ?? err;
      }
    }
  }

  statement(name: StatementName): Database.Statement {
    let statement = this.prepared.get(name);
    if (statement === undefined) {
      const text = this.clock ? SQL[name].replaceAll(NOW_MS, `${CLOCK_FUNCTION}()`) : SQL[name];
      statement = this.db.prepare(text);
      this.prepared.set(name, statement);
    }
    return statement;
  }

  /**
   * `BEGIN IMMEDIATE`, `fn`, `COMMIT` with statements prepared once (better-sqlite3's
   * `db.transaction(fn)` builds a new wrapper per call, a measurable share of a short write); a
   * throw, or a failed `COMMIT`, rolls back. Inside an open transaction, `fn` runs in a savepoint.
   */
  immediate<T>(fn: () => T): T {
    const db = this.db;
    if (db.inTransaction) return db.transaction(fn)();
    let control = this.control;
    if (control === null) {
      control = {
        begin: db.prepare("BEGIN IMMEDIATE"),
        commit: db.prepare("COMMIT"),
        rollback: db.prepare("ROLLBACK"),
      };
      this.control = control;
    }
    control.begin.run();
    try {
      const result = fn();
      control.commit.run();
      return result;
    } catch (err) {
      if (db.inTransaction) control.rollback.run();
      throw err;
    }
  }

  nowMs(): number {
    return (this.statement("now").get() as { now: number }).now;
  }

  /** Closes the database (idempotent); every later {@link use} rejects with `CLOSED`. */
  close(): void {
    const db = this.open;
    this.open = null;
    this.closed = true;
    this.prepared.clear();
    this.control = null;
    db?.close();
  }
}
