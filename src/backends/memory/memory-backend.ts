/**
 * `memory:`: the SQLite backend on a private in-memory database, with an injectable clock.
 */
import { SqliteBackend } from "../sqlite/sqlite-backend.js";

/** Options of {@link MemoryBackend}. */
export interface MemoryBackendOptions {
  /**
   * The database clock, in **milliseconds** since the epoch; defaults to SQLite's own clock (the
   * system time). Every time the backend stores or compares (`scheduled_at`, heartbeats, leases,
   * retention, schedules' next runs) is read from it, so a test can move time forward without
   * waiting. Read each time a statement needs "now"; values are rounded to whole milliseconds.
   */
  clock?: () => number;
}

/**
 * A fresh, private, non-durable store for tests of user code: the SQLite backend
 * ({@link SqliteBackend}) on an in-memory database that this object alone holds, migrated when
 * first used (calling {@link MemoryBackend.setup} is allowed and does nothing more). Same
 * contract, SQL and field semantics as a SQLite file, so the shared contract suite covers it;
 * nothing is written to disk, and wake-ups reach only this object's subscribers
 * (`capabilities`: no transactional enqueue, no cross-process wake-ups, not durable).
 *
 * Errors: as {@link SqliteBackend}; `SoniqError("CLOSED")` after {@link MemoryBackend.close}
 * (the database and every job in it are gone).
 */
export class MemoryBackend extends SqliteBackend {
  /** Always `"memory"`. */
  override readonly kind = "memory" as const;

  /** Creates an empty store; nothing is opened before the first call. */
  constructor(options: MemoryBackendOptions = {}) {
    super({ path: ":memory:" }, options.clock);
  }
}
