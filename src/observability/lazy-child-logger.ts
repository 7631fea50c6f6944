/**
 * A job's child logger, created on first use: pino's `child()` serialises its bindings and sets up
 * its level methods at once (several microseconds), while a busy worker logs nothing per job at
 * the usual `warn` level. {@link lazyChildLogger} answers the level methods by asking the parent
 * whether the level is enabled first; only an enabled line (or reading {@link JobLogger.logger},
 * e.g. a handler's `ctx.logger`) creates the real child, once.
 */
import type { Logger } from "pino";

/** The level methods the worker logs a job's lines with (pino's `Logger` has them all). */
export type LogLines = Pick<Logger, "trace" | "debug" | "info" | "warn" | "error" | "fatal">;

/** A job's logger: the level methods, and the real pino child when something needs all of it. */
export interface JobLogger extends LogLines {
  /** The pino child logger with the job's bindings (created on first read). */
  readonly logger: Logger;
}

type Level = keyof LogLines;
type Line = (...args: unknown[]) => void;

class LazyChild {
  private real: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly fields: Record<string, unknown> = {},
  ) {}

  /** The child's bindings, built when the child is made. */
  protected bindings(): Record<string, unknown> {
    return this.fields;
  }

  get logger(): Logger {
    this.real ??= this.parent.child(this.bindings());
    return this.real;
  }

  line(level: Level, args: unknown[]): void {
    if (!this.parent.isLevelEnabled(level)) return;
    (this.logger[level] as Line).apply(this.logger, args);
  }

  trace(...args: unknown[]): void {
    this.line("trace", args);
  }
  debug(...args: unknown[]): void {
    this.line("debug", args);
  }
  info(...args: unknown[]): void {
    this.line("info", args);
  }
  warn(...args: unknown[]): void {
    this.line("warn", args);
  }
  error(...args: unknown[]): void {
    this.line("error", args);
  }
  fatal(...args: unknown[]): void {
    this.line("fatal", args);
  }
}

/** A {@link LazyChild} whose bindings are read from a claimed job when the child is made. */
class LazyJobChild extends LazyChild {
  constructor(
    parent: Logger,
    private readonly job: { id: string; name: string; attempts: number },
  ) {
    super(parent);
  }

  protected override bindings(): Record<string, unknown> {
    const { job } = this;
    return { job_id: job.id, job_name: job.name, attempt: job.attempts + 1 };
  }
}

/**
 * A child of `parent` with `bindings`, created only when a line at an enabled level is written or
 * `.logger` is read (see the module comment). The parent's level is read at each line, so a level
 * changed later applies.
 */
export function lazyChildLogger(parent: Logger, bindings: Record<string, unknown>): JobLogger {
  // The class's methods take pino's every call shape (object and/or message, format arguments).
  return new LazyChild(parent, bindings) as unknown as JobLogger;
}

/**
 * {@link lazyChildLogger} for a claimed job's run, bound to `job_id`, `job_name` and `attempt`
 * (`job.attempts + 1`); those bindings are built only with the child (nothing per job otherwise).
 */
export function lazyJobLogger(
  parent: Logger,
  job: { id: string; name: string; attempts: number },
): JobLogger {
  return new LazyJobChild(parent, job) as unknown as JobLogger;
}
