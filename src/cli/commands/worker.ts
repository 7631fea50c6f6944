/**
 * `soniq worker`: runs a worker for the module's jobs until SIGTERM/SIGINT drains it, and exits
 * with the worker's exit code (0 drained, 1 deadline path, 2 start-up error, 3 not recorded).
 */
import type { Command } from "commander";
import { redactUrl } from "../../backends/select.js";
import { SoniqError } from "../../errors.js";
import { cliDefault } from "../../settings-docs.js";
import type { Soniq } from "../../soniq.js";
import { withTimeout } from "../../worker/with-timeout.js";
import type { Worker } from "../../worker/worker.js";
import { forwardSignals } from "../early-signals.js";
import { EXIT } from "../exit-codes.js";
import { loadSoniqModule } from "../load-module.js";
import { fail, number } from "../runner.js";

interface WorkerFlags {
  concurrency?: number;
  /** Comma-separated queue names. */
  queues?: string;
  /** Seconds. */
  shutdownTimeout?: number;
  /** Read by the module's `new Soniq()` (as SONIQ_DATABASE_URL); must agree with its settings. */
  databaseUrl?: string;
  /** Print one JSON line on standard output at exit: the worker id and its exit. */
  json?: boolean;
}

/** Longest wait for the instance to close once the worker finished, in milliseconds. */
const CLOSE_TIMEOUT_MS = 5000;

/** Runs the worker; never returns (the process exits with the worker's exit code). */
async function runWorker(module: string, flags: WorkerFlags): Promise<never> {
  // SIGTERM/SIGINT were caught since the process started (main.ts); from now on they drain
  // this worker, and any that came while the module loaded are applied as soon as it exists.
  let worker: Worker | undefined;
  const early: NodeJS.Signals[] = [];
  forwardSignals((signal) => {
    if (worker) void worker.stop(signal);
    else early.push(signal);
  });
  let soniq: Soniq;
  try {
    // The module's instance reads SONIQ_* when it is created: the flag reaches it that way.
    if (flags.databaseUrl !== undefined) process.env.SONIQ_DATABASE_URL = flags.databaseUrl;
    soniq = await loadSoniqModule(module);
    if (flags.databaseUrl !== undefined && soniq.settings.databaseUrl !== flags.databaseUrl) {
      throw new SoniqError(
        "INVALID_OPTION",
        `--database-url differs from the databaseUrl your module gives its instance (${redactUrl(soniq.settings.databaseUrl)}); drop one of them`,
      );
    }
    worker = soniq.worker({
      ...(flags.concurrency !== undefined ? { concurrency: flags.concurrency } : {}),
      ...(flags.queues !== undefined
        ? {
            queues: flags.queues
              .split(",")
              .map((q) => q.trim())
              .filter((q) => q.length > 0),
          }
        : {}),
      ...(flags.shutdownTimeout !== undefined ? { shutdownTimeout: flags.shutdownTimeout } : {}),
    });
  } catch (err) {
    fail(err);
  }
  for (const signal of early) void worker.stop(signal);
  try {
    await worker.start();
  } catch (err) {
    await soniq.close().catch(() => undefined);
    fail(err);
  }
  const exit = await worker.finished;
  let code: number = exit.exitCode;
  try {
    // Bounded: a database that stopped answering must not keep the process alive.
    await withTimeout(soniq.close(), CLOSE_TIMEOUT_MS, "closing the database connections");
  } catch (err) {
    soniq.logger.error({ err: String(err) }, "closing the backend failed");
    code = Math.max(code, EXIT.NOT_RECORDED);
  }
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify({ worker_id: worker.id, reason: exit.reason, exit_code: code, released: exit.released })}\n`,
    );
  }
  // Every release is durable at this point; exit even if an abandoned handler keeps timers alive.
  process.exit(code);
}

/** Adds `worker <module> [-c] [-q] [--shutdown-timeout]` to `program`. */
export function register(program: Command): void {
  program
    .command("worker")
    .description(
      "Run a worker for the jobs your module defines. SIGTERM/SIGINT drain it: no new claims, in-flight jobs finish, at shutdown_timeout the rest are NACK'd. Exit 0 drained, 1 deadline path, 2 start-up error, 3 outcome not recorded.",
    )
    .argument("<module>", "your module (.js or .ts) exporting the Soniq instance")
    .option(
      "-c, --concurrency <n>",
      `jobs run at once (default: ${cliDefault("concurrency")})`,
      number("concurrency"),
    )
    .option("-q, --queues <list>", "comma-separated queues to claim from (default: all)")
    .option(
      "--shutdown-timeout <seconds>",
      `seconds to wait for in-flight jobs on SIGTERM (default: ${cliDefault("shutdownTimeout")})`,
      number("shutdown-timeout"),
    )
    .option(
      "--database-url <url>",
      "the database (set as SONIQ_DATABASE_URL before your module loads; must agree with it)",
    )
    .option("--json", "print one JSON line at exit: worker id, exit reason and code, released jobs")
    .action(runWorker);
}
