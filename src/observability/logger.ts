/**
 * Structured logging with pino: JSON lines by default, pretty when `pretty` is set (the CLI sets
 * it on a TTY). Field names used across Soniq: `worker_id`, `job_id`, `job_name`, `attempt`,
 * `signal`, `drain_started_at`, `deadline_at`, `exit_reason`. Job arguments are never logged
 * unless `logArgs` is on.
 */
import { type Logger, pino } from "pino";
import pretty from "pino-pretty";

export type { Logger };

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** pino level, or "silent". */
  level: string;
  /** Human-readable lines (for a terminal) instead of JSON. */
  pretty?: boolean;
  /** Where lines go; default standard error (file descriptor 2) so stdout stays for data. */
  destination?: NodeJS.WritableStream;
}

/** A pino logger with Soniq's base fields. */
export function createLogger(options: CreateLoggerOptions): Logger {
  const base = { name: "soniq" };
  if (options.pretty) {
    return pino(
      { level: options.level, base },
      pretty({ colorize: true, sync: true, destination: 2, ignore: "pid,hostname" }),
    );
  }
  return pino(
    { level: options.level, base, timestamp: pino.stdTimeFunctions.isoTime },
    options.destination ?? pino.destination({ dest: 2, sync: true }),
  );
}
