import { readFileSync } from "node:fs";
/**
 * The `soniq` commands: setup, worker, enqueue, status. Exit codes: 0 drained / success,
 * 1 shutdown deadline path taken, 2 start-up or configuration error, 3 outcome not recorded.
 */
import { Command, InvalidArgumentError } from "commander";
import { redactUrl } from "../backends/select.js";
import { isSoniqError } from "../errors.js";
import { recoverOnce } from "../maintenance/maintenance.js";
import { Soniq } from "../soniq.js";
import { withTimeout } from "../worker/with-timeout.js";
import type { Worker } from "../worker/worker.js";
import { registerSchedulesCommand } from "./commands/schedules.js";
import { forwardSignals } from "./early-signals.js";
import { EXIT } from "./exit-codes.js";
import { loadSoniqModule } from "./load-module.js";

interface ConnectionFlags {
  databaseUrl?: string;
  module?: string;
}

function number(name: string) {
  return (value: string) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n))
      throw new InvalidArgumentError(`${name} must be a number`);
    return n;
  };
}

/** The instance to use: the module's, or a bare one from flags and SONIQ_* variables. */
async function instanceFor(
  flags: ConnectionFlags,
  bare: { rejectUnknownJobs?: boolean } = {},
): Promise<Soniq> {
  if (flags.module) return loadSoniqModule(flags.module);
  const url = flags.databaseUrl ?? process.env.SONIQ_DATABASE_URL ?? "";
  if (/^memory:/i.test(url)) {
    process.stderr.write(
      "soniq: memory: lives only inside this one process; nothing the CLI writes there outlives it\n",
    );
  }
  return new Soniq({
    ...(flags.databaseUrl ? { databaseUrl: flags.databaseUrl } : {}),
    ...bare,
    logLevel: process.env.SONIQ_LOG_LEVEL ? undefined : "warn",
  });
}

function fail(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`soniq: ${message}\n`);
  process.exit(EXIT.STARTUP);
}

const program = new Command()
  .name("soniq")
  .description("Background jobs in PostgreSQL or SQLite with a graceful-shutdown contract.")
  .version(
    (
      JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
        version: string;
      }
    ).version,
  )
  .showHelpAfterError()
  // Usage errors are start-up errors: exit 2, never 1 (which means "the deadline path was taken").
  .exitOverride((err) => {
    process.exit(err.exitCode === 0 ? 0 : EXIT.STARTUP);
  })
  .configureOutput({ outputError: (text, write) => write(text) });

program
  .command("setup")
  .description(
    "Create or migrate Soniq's tables (idempotent; safe to run from several processes at once).",
  )
  .argument(
    "[module]",
    "your module exporting the Soniq instance (for its settings); default: SONIQ_* variables",
  )
  .option(
    "--database-url <url>",
    "postgres://…, sqlite:PATH or memory: (default: SONIQ_DATABASE_URL or sqlite:./soniq.db)",
  )
  .action(async (module: string | undefined, flags: ConnectionFlags) => {
    try {
      const soniq = await instanceFor({ ...flags, ...(module ? { module } : {}) });
      await soniq.setup();
      const where = soniq.settings.databaseUrl.startsWith("postgres")
        ? `${redactUrl(soniq.settings.databaseUrl)}, schema ${soniq.settings.schema}`
        : redactUrl(soniq.settings.databaseUrl);
      process.stdout.write(`soniq: schema ready (${where})\n`);
      await soniq.close();
    } catch (err) {
      fail(err);
    }
  });

program
  .command("worker")
  .description(
    "Run a worker for the jobs your module defines. SIGTERM/SIGINT drain it: no new claims, in-flight jobs finish, at shutdown_timeout the rest are NACK'd. Exit 0 drained, 1 deadline path, 2 start-up error, 3 outcome not recorded.",
  )
  .argument("<module>", "your module (.js or .ts) exporting the Soniq instance")
  .option(
    "-c, --concurrency <n>",
    "jobs run at once (default: SONIQ_CONCURRENCY or 10)",
    number("concurrency"),
  )
  .option("-q, --queues <list>", "comma-separated queues to claim from (default: all)")
  .option(
    "--shutdown-timeout <seconds>",
    "seconds to wait for in-flight jobs on SIGTERM (default 30)",
    number("shutdown-timeout"),
  )
  .action(
    async (
      module: string,
      flags: { concurrency?: number; queues?: string; shutdownTimeout?: number },
    ) => {
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
        soniq = await loadSoniqModule(module);
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
          ...(flags.shutdownTimeout !== undefined
            ? { shutdownTimeout: flags.shutdownTimeout }
            : {}),
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
        await withTimeout(soniq.close(), 5000, "closing the database connections");
      } catch (err) {
        soniq.logger.error({ err: String(err) }, "closing the backend failed");
        code = Math.max(code, EXIT.NOT_RECORDED);
      }
      // Every release is durable at this point; exit even if an abandoned handler keeps timers alive.
      process.exit(code);
    },
  );

program
  .command("enqueue")
  .description("Enqueue one job by name and print its id.")
  .argument("<name>", "job name, e.g. email.send")
  .option(
    "--args <json>",
    "the arguments as JSON; @FILE reads a file, - reads standard input",
    "{}",
  )
  .option("--queue <queue>", "queue (default: the job's, or default)")
  .option("--delay <seconds>", "run no earlier than this many seconds from now", number("delay"))
  .option("--priority <n>", "integer -1000..1000, lower runs first", number("priority"))
  .option("--dedup-key <key>", "a duplicate returns the existing job's id")
  .option(
    "--module <module>",
    "your module: validates the name and arguments against its job definitions",
  )
  .option("--database-url <url>", "postgres://…, sqlite:PATH or memory:")
  .action(
    async (
      name: string,
      flags: ConnectionFlags & {
        args: string;
        queue?: string;
        delay?: number;
        priority?: number;
        dedupKey?: string;
      },
    ) => {
      try {
        let args: unknown;
        const text =
          flags.args === "-"
            ? readFileSync(0, "utf8")
            : flags.args.startsWith("@")
              ? readFileSync(flags.args.slice(1), "utf8")
              : flags.args;
        try {
          args = JSON.parse(text);
        } catch (err) {
          throw new InvalidArgumentError(`--args is not valid JSON: ${String(err)}`);
        }
        if (!flags.module) {
          process.stderr.write(
            "soniq: enqueue without --module does not check the job name or arguments; the worker dead-letters unknown names (unknown_job) and invalid arguments (invalid_args). Pass --module ./jobs.ts to check them now.\n",
          );
        }
        const soniq = await instanceFor(flags, { rejectUnknownJobs: false });
        const id = await soniq.enqueue(name, args, {
          ...(flags.queue !== undefined ? { queue: flags.queue } : {}),
          ...(flags.delay !== undefined ? { delay: flags.delay } : {}),
          ...(flags.priority !== undefined ? { priority: flags.priority } : {}),
          ...(flags.dedupKey !== undefined ? { dedupKey: flags.dedupKey } : {}),
        });
        process.stdout.write(`${id}\n`);
        await soniq.close();
      } catch (err) {
        fail(err);
      }
    },
  );

program
  .command("recover")
  .description(
    "Requeue now every processing job whose worker is not live (stale heartbeat, stopped, or unknown); a job past maxInterruptions goes to the dead-letter queue as crash_loop. Workers also do this by themselves.",
  )
  .argument("[module]", "your module exporting the Soniq instance (for its settings)")
  .option("--database-url <url>", "postgres://…, sqlite:PATH or memory:")
  .option("--json", "print JSON for scripts")
  .action(async (module: string | undefined, flags: ConnectionFlags & { json?: boolean }) => {
    try {
      const soniq = await instanceFor({ ...flags, ...(module ? { module } : {}) });
      const result = await recoverOnce(await soniq.backend(), soniq.settings, soniq.logger);
      if (flags.json) process.stdout.write(`${JSON.stringify(result)}\n`);
      else {
        process.stdout.write(
          `requeued ${result.requeued.length}, moved to the dead-letter queue (crash_loop) ${result.deadLettered.length}\n`,
        );
      }
      await soniq.close();
    } catch (err) {
      fail(err);
    }
  });

program
  .command("status")
  .description(
    "Counts by state (total, queued, processing, done, dead_letter, cancelled) and live workers.",
  )
  .argument("[module]", "your module exporting the Soniq instance (for its settings)")
  .option("--json", "print JSON for scripts")
  .option("--database-url <url>", "postgres://…, sqlite:PATH or memory:")
  .action(async (module: string | undefined, flags: ConnectionFlags & { json?: boolean }) => {
    try {
      const soniq = await instanceFor({ ...flags, ...(module ? { module } : {}) });
      const [stats, workers] = await Promise.all([soniq.stats(), soniq.workers()]);
      // One order on every backend.
      const counts = {
        total: stats.total,
        queued: stats.queued,
        processing: stats.processing,
        done: stats.done,
        dead_letter: stats.dead_letter,
        cancelled: stats.cancelled,
      };
      const live = workers.filter((w) => w.live);
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify({
            ...counts,
            workers: live.map((w) => ({
              id: w.id,
              hostname: w.hostname,
              pid: w.pid,
              status: w.status,
              queues: w.queues,
              concurrency: w.concurrency,
              last_heartbeat_at: w.lastHeartbeatAt.toISOString(),
            })),
          })}\n`,
        );
      } else {
        const lines = Object.entries(counts).map(([k, v]) => `${k.padEnd(12)} ${v}`);
        lines.push(`${"workers".padEnd(12)} ${live.length} live`);
        for (const w of live) {
          lines.push(
            `  ${w.id}  ${w.status}  concurrency=${w.concurrency}  queues=${w.queues?.join(",") ?? "*"}`,
          );
        }
        process.stdout.write(`${lines.join("\n")}\n`);
      }
      await soniq.close();
    } catch (err) {
      fail(err);
    }
  });

registerSchedulesCommand(program, { instanceFor, fail });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (isSoniqError(err)) fail(err);
  throw err;
}
