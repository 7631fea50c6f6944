/**
 * The payloads of the remote-job events (docs/remote-jobs.md, "Logs and events": `remote_phase`,
 * `remote_handoff`, `remote_submit`, `remote_poll`, `remote_reconcile`), part of the event catalogue in `events.ts`
 * (which names them in `SoniqEventMap` and re-exports them). Conventions as there: snake_case
 * fields, ids as stored.
 */

/** Payload of `remote_phase`: a remote job's submission phase changed durably. */
export type RemotePhaseEvent = {
  /** The worker that wrote it, or null (crash recovery, an operator, a callback). */
  worker_id: string | null;
  job_id: string;
  job_name: string;
  /** The new phase: `submitting`, `accepted`, `frozen`, `released` or `finished`. */
  phase: "submitting" | "accepted" | "frozen" | "released" | "finished";
  /** The remote task id, once known. */
  task_id: string | null;
};

/** Payload of `remote_handoff`: a remote job left a worker at the deadline or after a crash. */
export type RemoteHandoffEvent = {
  /** The worker handing it off, or null when crash recovery did. */
  worker_id: string | null;
  job_id: string;
  job_name: string;
  /** Where it was: `claimed` (not submitting), `submitting` (no usable answer), `accepted`. */
  phase: "claimed" | "submitting" | "accepted";
  task_id: string | null;
  /** `release` (queued, attempts kept), `freeze` (frozen) or `handoff` (to polling, due now). */
  handoff_action: "release" | "freeze" | "handoff";
  /** `deadline` (FORCE_TIMEOUT_PATH), `draining` (no new submission starts), `crash` (recovery). */
  reason: "deadline" | "draining" | "crash";
};

/** Payload of `remote_poll`: one poll of an accepted remote task ended. */
export type RemotePollEvent = {
  /** The worker that polled. */
  worker_id: string;
  job_id: string;
  job_name: string;
  task_id: string;
  /**
   * `pending` (polled again later, not an attempt), `done`, `failed` (a definite failure),
   * `error` (the poll threw, timed out or returned an unusable result: polled again later),
   * `deadline` (cut off by the shutdown deadline: handed off), `timeout` (past `pollTimeout`: not
   * polled, dead-lettered `remote_timeout`).
   */
  outcome: "pending" | "done" | "failed" | "error" | "deadline" | "timeout";
  /** How long the `poll` call took, in **milliseconds** (wall clock); null for `timeout` (not polled). */
  duration_ms: number | null;
};

/** Payload of `remote_submit`: one `submit` call of a remote job ended. */
export type RemoteSubmitEvent = {
  /** The worker that submitted. */
  worker_id: string;
  job_id: string;
  job_name: string;
  /**
   * `accepted` (the remote side took the task), `failed` (a definite failure it reported),
   * `error` (it threw or returned an unusable result: frozen), `timeout` (past `submitTimeout`:
   * frozen), `deadline` (cut off by the shutdown deadline: frozen).
   */
  outcome: "accepted" | "failed" | "error" | "timeout" | "deadline";
  /** How long the `submit` call took, in **milliseconds** (wall clock). */
  duration_ms: number;
};

/** Payload of `remote_reconcile`: one `reconcile` of a frozen remote job ended. */
export type RemoteReconcileEvent = {
  /** The worker that ran it. */
  worker_id: string;
  job_id: string;
  job_name: string;
  /**
   * `accepted` (the provider has the task: handed to polling), `not_submitted` (released to be
   * submitted again with the same idempotency key), `undecided` (it threw, timed out or returned
   * an unusable result: it stays frozen and is tried again), `deadline` (cut off by the shutdown
   * deadline: stays frozen, due now).
   */
  outcome: "accepted" | "not_submitted" | "undecided" | "deadline";
  /** How long the `reconcile` call took, in **milliseconds** (wall clock). */
  duration_ms: number;
};
