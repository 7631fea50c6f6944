/**
 * `soniq worker`: runs a worker for the module's jobs until SIGTERM/SIGINT drains it, and exits
 * with the worker's exit code (0 drained, 1 deadline path, 2 start-up error, 3 not recorded,
 * 4 uncaught exception — see process-guards.ts).
 */
import type { Command } from "commander";
import { collectDefaultMetrics } from "prom-client";
import { SoniqError } from "../../errors.js";
import { healthHandler } from "../../observability/health/health-handler.js";
import { HealthServer } from "../../observability/health/health-server.js";
import { prometheusMetrics } from "../../observability/prometheus/exporter.js";
import { cliDefault } from "../../settings-docs.js";
import type { Soniq } from "../../soniq.js";
import { withTimeout } from "../../worker/with-timeout.js";
import type { Worker } from "../../worker/worker.js";
import { forwardSignals } from "../early-signals.js";
import { EXIT } from "../exit-codes.js";
import { loadModuleWithDatabase } from "../load-module.js";
import { installProcessGuards } from "../process-guards.js";
import { connection, fail, number, withModule } from "../runner.js";

interface WorkerFlags {
  concurrency?: number;
  /** TCP port of /livez, /readyz and /metrics. */
  healthPort?: number;
  /** Interface the health server binds. */
  healthHost?: string;
  /** Seconds the health endpoints keep answering after the worker stopped. */
  healthLinger?: number;
  /** Comma-separated queue names. */
  queues?: string;
  /** Seconds. */
  shutdownTimeout?: number;
  /** Read by the module's `new Soniq()` (as SONIQ_DATABASE_URL); must agree with its settings. */
  databaseUrl?: string;
  /** `--module`: the module, when not given as the argument. */
  module?: string;
  /** Print one JSON line on standard output at exit: the worker id and its exit. */
  json?: boolean;
}

/** Longest wait for the instance to close once the worker finished, in milliseconds. */
const CLOSE_TIMEOUT_MS = 5000;

/** Runs the worker; never returns (the process exits with the worker's exit code). */
async function runWorker(argument: string | undefined, flags: WorkerFlags): Promise<never> {
  // SIGTERM/SIGINT were caught since the process started (main.ts); from now on they drain
  // this worker, and any that came while the module loaded are applied as soon as it exists.
  let worker: Worker | undefined;
  const early: NodeJS.Signals[] = [];
  /** Ends the linger after the worker stopped: any further signal. */
  let endLinger: (() => void) | undefined;
  forwardSignals((signal) => {
    endLinger?.();
    if (worker) void worker.stop(signal);
    else early.push(signal);
  });
  let soniq: Soniq;
  try {
    const { module } = connection(argument, flags);
    if (!module) {
      throw new SoniqError(
        "INVALID_INPUT",
        "worker needs your module: soniq worker ./jobs.ts (or --module ./jobs.ts)",
      );
    }
    // The one rule of every command (load-module.ts): the flag reaches the module's instance as
    // SONIQ_DATABASE_URL; only a different URL in the module's own code conflicts.
    soniq = await loadModuleWithDatabase(module, flags.databaseUrl);
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
  // Handler mistakes must not end the worker as the deadline path would (exit 1).
  // Exit 4 marks the worker row stopped first, so its jobs are recovered at the next pass.
  const guarded = worker;
  const guardedSoniq = soniq;
  installProcessGuards(soniq.logger, soniq.eventBus, {
    markStopped: async () =>
      (await guardedSoniq.backend()).workerMarkStopped({
        workerId: guarded.id,
        exitReason: "uncaught_exception",
      }),
  });
  let health: HealthServer | undefined;
  if (flags.healthPort !== undefined) {
    // Subscribed before the worker starts: no event is missed.
    const metrics = prometheusMetrics(soniq);
    collectDefaultMetrics({ register: metrics.registry });
    const probed = worker;
    const live = soniq;
    health = new HealthServer({
      handler: healthHandler({
        worker: probed,
        checkDatabase: async () => (await live.backend()).now(),
        metrics,
      }),
      port: flags.healthPort,
      ...(flags.healthHost !== undefined ? { host: flags.healthHost } : {}),
      logger: soniq.logger,
    });
    try {
      await health.start();
    } catch (err) {
      await soniq.close().catch(() => undefined);
      fail(new Error(`--health-port ${flags.healthPort}: ${String(err)}`));
    }
  }
  for (const signal of early) void worker.stop(signal);
  try {
    await worker.start();
  } catch (err) {
    await health?.stop();
    await soniq.close().catch(() => undefined);
    fail(err);
  }
  const exit = await worker.finished;
  if (health && flags.healthLinger !== undefined && flags.healthLinger > 0) {
    // Everything is durable: the last scrape can still read the drain's counters (a SIGKILL
    // now loses nothing); another signal ends the wait.
    soniq.logger.info(
      { linger_seconds: flags.healthLinger },
      "worker stopped; health endpoints linger (/readyz says 503)",
    );
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, (flags.healthLinger as number) * 1000);
      endLinger = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
  // /readyz said 503 since the first signal; the probes stop answering as the process exits.
  await health?.stop();
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
      `${JSON.stringify({ workerId: worker.id, reason: exit.reason, exitCode: code, released: exit.released })}\n`,
    );
  }
  // Every release is durable at this point; exit even if an abandoned handler keeps timers alive.
  process.exit(code);
}

/**
 * Adds `worker [module] [--module] [--database-url] [-c] [-q] [--shutdown-timeout]
 * [--health-port] [--health-host]` to `program`.
 */
export function register(program: Command): void {
  const command = program
    .command("worker")
    .description(
      "Run a worker for the jobs your module defines. SIGTERM/SIGINT drain it: no new claims, in-flight jobs finish, at shutdown_timeout the rest are NACK'd. Exit 0 drained, 1 deadline path, 2 start-up error, 3 outcome not recorded, 4 uncaught exception (rows left for crash recovery).",
    )
    .argument("[module]", "your module (.js or .ts) exporting the Soniq instance (or --module)")
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
      "the database of your module's instance (set as SONIQ_DATABASE_URL before it loads; a different databaseUrl in the module's own code is refused)",
    )
    .option("--json", "print one JSON line at exit: worker id, exit reason and code, released jobs")
    .option(
      "--health-port <n>",
      "serve /livez, /readyz (503 from the first signal) and /metrics (Prometheus) on this port",
      number("health-port"),
    )
    .option("--health-host <address>", "interface for --health-port (default: 0.0.0.0)")
    .option(
      "--health-linger <seconds>",
      "after the worker stopped, keep /readyz (503) and /metrics answering this long so a last scrape sees the drain's counters; a further signal ends it (default: 0)",
      number("health-linger"),
    );
  withModule(command).action(runWorker);
}
