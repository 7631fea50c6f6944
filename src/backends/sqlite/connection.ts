/**
 * The SQLite backend's one connection: opened on first use with its pragmas, statements of the
 * catalogue (sql.ts) prepared once, lock waits retried without blocking the event loop, and the
 * driver's "no such table" turned into `SCHEMA_NOT_READY`.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { SoniqError } from "../../errors.js";
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

/**
 * One better-sqlite3 connection to {@link SqliteConnection.path}, with `journal_mode=WAL`,
 * `synchronous=NORMAL` and a {@link BUSY_SLICE_MS} ms `busy_timeout` per statement.
 */
export class SqliteConnection implements SqliteSession {
  private open: Database.Database | null = null;
  private closed = false;
  private readonly prepared = new Map<StatementName, Database.Statement>();

  /**
   * @param path The database file (or `":memory:"`), as the backend was given it.
   * @param busyTimeoutMs How long, in milliseconds, a call retries a busy database.
   */
  constructor(
    readonly path: string,
    readonly busyTimeoutMs: number,
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
    const inMemory = this.path === ":memory:";
    if (!inMemory && !create && !existsSync(this.path)) {
      throw new SoniqError(
        "SCHEMA_NOT_READY",
        `there is no SQLite database at ${resolve(this.path)}: run \`soniq setup\` to create it`,
      );
    }
    if (!inMemory) mkdirSync(dirname(resolve(this.path)), { recursive: true });
    const db = new Database(this.path, { timeout: BUSY_SLICE_MS });
    try {
      db.pragma(`busy_timeout = ${BUSY_SLICE_MS}`);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
    } catch (err) {
      db.close();
      if ((err as { code?: unknown }).code === "SQLITE_NOTADB") {
        throw new SoniqError(
          "NOT_A_DATABASE",
          `${resolve(this.path)} is not a SQLite database: point SONIQ_DATABASE_URL (or --database-url) at a Soniq database file`,
          { cause: err },
        );
      }
      throw err;
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
   * @throws SoniqError `CLOSED` after close; `SCHEMA_NOT_READY` for a missing table or file;
   * `SQLITE_BUSY` from the driver once `busyTimeoutMs` is spent.
   */
  async use<T>(fn: (session: SqliteSession) => T, create = false): Promise<T> {
    const giveUpAt = Date.now() + this.busyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        this.connect(create);
        return fn(this);
      } catch (err) {
        if (isBusy(err) && Date.now() < giveUpAt) {
          const wait = Math.min(MAX_RETRY_PAUSE_MS, 2 ** attempt) + Math.random() * 5;
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
        throw err;
      }
    }
  }

  statement(name: StatementName): Database.Statement {
    let statement = this.prepared.get(name);
    if (statement === undefined) {
      statement = this.db.prepare(SQL[name]);
      this.prepared.set(name, statement);
    }
    return statement;
  }

  immediate<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
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
    db?.close();
  }
}
