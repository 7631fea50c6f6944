/** `soniq enqueue`: enqueues one job by name and prints its id. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { SoniqError } from "../../errors.js";
import {
  type ConnectionFlags,
  number,
  runCommand,
  withDatabaseUrl,
  withInstance,
} from "../runner.js";

interface EnqueueFlags extends ConnectionFlags {
  /** JSON text, `@FILE` or `-` (standard input). */
  args: string;
  queue?: string;
  /** Seconds from now. */
  delay?: number;
  priority?: number;
  dedupKey?: string;
  /** ISO 8601 with a zone. */
  runAt?: string;
  maxAttempts?: number;
  uniqueByArgs?: boolean;
  json?: boolean;
}

/**
 * The job's arguments: `--args` as JSON, read from a file (`@FILE`) or standard input (`-`).
 * @throws SoniqError `INVALID_INPUT` for a file that cannot be read or text that is not JSON.
 */
function readArgs(flag: string): unknown {
  const source = flag === "-" ? "standard input" : flag.startsWith("@") ? flag.slice(1) : null;
  let text: string;
  try {
    text =
      flag === "-"
        ? readFileSync(0, "utf8")
        : source !== null
          ? readFileSync(source, "utf8")
          : flag;
  } catch (err) {
    throw new SoniqError(
      "INVALID_INPUT",
      `cannot read --args from ${source === "standard input" ? source : resolve(source ?? "")}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new SoniqError(
      "INVALID_INPUT",
      `--args${source ? ` (${source})` : ""} is not valid JSON: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/**
 * Adds `enqueue <name> [--args] [--queue] [--delay | --run-at] [--priority] [--max-attempts]
 * [--dedup-key | --unique-by-args] [--module] [--database-url] [--json]` to `program`.
 */
export function register(program: Command): void {
  const command = program
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
    .option("--run-at <instant>", "run no earlier than this instant: ISO 8601 with a zone")
    .option(
      "--max-attempts <n>",
      "runs before the dead-letter queue (default: the job's, or maxAttempts)",
      number("max-attempts"),
    )
    .option("--unique-by-args", "dedup key = name + canonical JSON of the arguments")
    .option("--json", "print the id, queue and attempts used as JSON")
    .option(
      "--module <module>",
      "your module: validates the name and arguments against its job definitions",
    );
  withDatabaseUrl(command).action((name: string, flags: EnqueueFlags) =>
    runCommand(async () => {
      const args = readArgs(flags.args);
      if (!flags.module) {
        process.stderr.write(
          "soniq: enqueue without --module does not check the job name or arguments; a worker leaves a name it has no definition for queued and dead-letters invalid arguments (invalid_args); the job gets version 1. Pass --module ./jobs.ts to check them now and stamp the definition's version.\n",
        );
      }
      await withInstance(
        flags,
        async (soniq) => {
          const id = await soniq.enqueue(name, args, {
            ...(flags.queue !== undefined ? { queue: flags.queue } : {}),
            ...(flags.delay !== undefined ? { delay: flags.delay } : {}),
            ...(flags.runAt !== undefined ? { runAt: flags.runAt } : {}),
            ...(flags.priority !== undefined ? { priority: flags.priority } : {}),
            ...(flags.maxAttempts !== undefined ? { maxAttempts: flags.maxAttempts } : {}),
            ...(flags.dedupKey !== undefined ? { dedupKey: flags.dedupKey } : {}),
            ...(flags.uniqueByArgs ? { uniqueByArgs: true } : {}),
          });
          const job = await soniq.getJob(id);
          const used = { id, queue: job?.queue ?? null, maxAttempts: job?.maxAttempts ?? null };
          if (!flags.module && (flags.queue === undefined || flags.maxAttempts === undefined)) {
            // Without the definition this command cannot know the job's own queue and attempts:
            // say exactly what it used instead of guessing silently.
            process.stderr.write(
              `soniq: enqueued ${name} on queue "${used.queue}" with maxAttempts ${used.maxAttempts}${flags.queue === undefined ? " (queue: the default, not read from the job's definition)" : ""}${flags.maxAttempts === undefined ? " (maxAttempts: the maxAttempts setting, not the definition's)" : ""}; pass --module to use the definition, or --queue and --max-attempts\n`,
            );
          }
          process.stdout.write(flags.json ? `${JSON.stringify(used)}\n` : `${id}\n`);
        },
        { rejectUnknownJobs: false },
      );
    }),
  );
}
