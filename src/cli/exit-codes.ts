/** The CLI's exit codes (docs/shutdown.md, "Signals and exit codes"). */
export const EXIT = {
  /** Drained: every in-flight job finished. */
  DRAINED: 0,
  /** The shutdown deadline path was taken: work was released (NACK'd). */
  DEADLINE: 1,
  /** Start-up or configuration error. */
  STARTUP: 2,
  /** An outcome could not be recorded (database unreachable); rows left for recovery. */
  NOT_RECORDED: 3,
  /**
   * An uncaught exception (a handler threw outside any awaited promise, e.g. in a timer callback):
   * the process is in an undefined state and exits at once; its claimed rows stay `processing`
   * for crash recovery. Never 1 (the deadline path) — which is Node's own code for it.
   */
  UNCAUGHT_EXCEPTION: 4,
} as const;
