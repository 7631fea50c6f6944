/**
 * The backend contract composed: the job, worker, lease and schedule stores, the notifier, the
 * capabilities and the connection lifecycle. PostgreSQL, SQLite and memory implement it; the
 * shared contract suite (`test/contract/`) runs against all three.
 *
 * @internal Not a stable public API: it may change in any release. Do not implement it outside
 * this package (a custom `backend` option is for tests).
 */
import type { AdminStore } from "./admin-store.js";
import type { Capabilities } from "./capabilities.js";
import type { FinishNotices } from "./finish-notices.js";
import type { FlowStore } from "./flow-store.js";
import type { HandOffDesk } from "./hand-off.js";
import type { JobStore } from "./job-store.js";
import type { LeaseStore } from "./lease-store.js";
import type { Notifier } from "./notifier.js";
import type { ScheduleStore } from "./schedule-store.js";
import type { SubmissionStore } from "./submission-store.js";
import type { WorkerStore } from "./worker-store.js";

/** The backend kinds. */
export type BackendKind = "memory" | "sqlite" | "postgres";

/**
 * A backend. The stores are flat on the object (`backend.jobClaim(…)`), so one object can be
 * wrapped whole (instrumentation, fault injection); the notifier is a member, because wake-ups
 * are not storage and the worker runtime needs only them.
 * @internal
 */
export interface Backend extends JobStore, WorkerStore, LeaseStore, ScheduleStore {
  /** Which engine. */
  readonly kind: BackendKind;
  /** What it can do beyond the common contract. */
  readonly capabilities: Capabilities;
  /** Wake-ups. */
  readonly notifier: Notifier;
  /**
   * The operations store: listing and filtering, the timeline, cancel requests, progress, queues
   * (pause, `maxRunning`), worker details (admin-store.ts). A member, like the notifier: the
   * admin API and the worker's heartbeat use it.
   */
  readonly admin: AdminStore;
  /** Workflows: jobs with dependencies and their flows (docs/workflows.md): `flow-store.ts`. */
  readonly flows: FlowStore;
  /** Remote jobs' durable submission records (docs/remote-jobs.md): `submission-store.ts`. */
  readonly submissions: SubmissionStore;
  /**
   * Hand-off at enqueue (hand-off.ts): where this process's workers offer free slots to a pool
   * enqueue of one due job. Absent on backends that do not hand off (memory: its claim is a
   * synchronous call already).
   */
  readonly handOff?: HandOffDesk;
  /**
   * Notices of finished jobs for `waitFor` (finish-notices.ts). Absent where a wait reads at an
   * interval instead (SQLite, memory).
   */
  readonly finishNotices?: FinishNotices;
  /** Creates or migrates the schema. Idempotent; safe when two processes run it at once. */
  setup(): Promise<void>;
  /**
   * Releases connections and drops every wake-up subscriber. Idempotent. Later calls reject at
   * once with `SoniqError("CLOSED")`.
   */
  close(): Promise<void>;
  /** The database's current time. */
  now(): Promise<Date>;
}
