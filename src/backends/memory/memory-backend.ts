/**
 * The memory backend facade: the {@link Backend} contract over in-process maps, delegating to
 * the memory job, worker, lease and schedule stores (one file each) over one `MemoryState`, plus
 * the operations store (`admin`, admin-store.ts).
 */
import type { Backend, Capabilities, Notifier } from "../contract/index.js";
import { DelegatingStores } from "../shared/delegating-stores.js";
import { MemoryAdminStore } from "./admin-store.js";
import { MemoryJobStore } from "./job-store.js";
import { MemoryLeaseStore } from "./lease-store.js";
import { MemoryScheduleStore } from "./schedule-store.js";
import { MemoryState } from "./state.js";
import { MemoryWorkerStore } from "./worker-store.js";

/** Options of {@link MemoryBackend}. */
export interface MemoryBackendOptions {
  /** The "database clock"; defaults to `Date.now`. Returns milliseconds since the epoch. */
  clock?: () => number;
}

/**
 * In-process backend for unit tests of user code. Same contract and field semantics as the
 * SQLite and PostgreSQL backends (the shared contract suite proves it); nothing is persisted,
 * and wake-ups reach only this object's subscribers. Each method: see its contract in
 * `backends/contract/`.
 */
export class MemoryBackend extends DelegatingStores implements Backend {
  /** Always `"memory"`. */
  readonly kind = "memory" as const;
  /** No transactional enqueue, no cross-process wake-ups, nothing durable. */
  readonly capabilities: Capabilities = {
    transactionalEnqueue: false,
    crossProcessWake: false,
    durable: false,
  };
  private readonly state: MemoryState;
  /** The operations store (contract/admin-store.ts) over the same state. */
  readonly admin: MemoryAdminStore;

  /** Creates an empty store. */
  constructor(options: MemoryBackendOptions = {}) {
    const state = new MemoryState(options.clock ?? Date.now);
    const jobs = new MemoryJobStore(state);
    super({
      jobs,
      workers: new MemoryWorkerStore(state),
      leases: new MemoryLeaseStore(state),
      schedules: new MemoryScheduleStore(state, { insertJobs: (list) => jobs.insertJobs(list) }),
    });
    this.state = state;
    this.admin = new MemoryAdminStore(state);
  }

  /** In-process wake-ups of this object's own writes. */
  get notifier(): Notifier {
    return this.state.bus;
  }

  /** Nothing to create; rejects with `CLOSED` after close. */
  async setup(): Promise<void> {
    this.state.check();
  }

  /** See {@link Backend.close}. */
  async close(): Promise<void> {
    this.state.close();
  }

  /** The clock's now. */
  async now(): Promise<Date> {
    this.state.check();
    return this.state.date();
  }
}
