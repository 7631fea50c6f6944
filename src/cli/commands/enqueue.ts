/** `soniq enqueue`: enqueues one job by name and prints its id. */
import { readFileSync } from "node:fs";
import { type Command, InvalidArgumentError } from "commander";
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
}

/** The job's arguments: `--args` as JSON, read from a file (`@FILE`) or standard input (`-`). */
function readArgs(flag: string): unknown {
  const text =
    flag === "-"
      ? readFileSync(0, "utf8")
      : flag.startsWith("@")
        ? readFileSync(flag.slice(1), "utf8")
        : flag;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InvalidArgumentError(`--args is not valid JSON: ${String(err)}`);
  }
}

/** Adds `enqueue <name> [--args] [--queue] [--delay] [--priority] [--dedup-key] …` to `program`. */
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
    .option(
      "--module <module>",
      "your module: validates the name and arguments against its job definitions",
    );
  withDatabaseUrl(command).action((name: string, flags: EnqueueFlags) =>
    runCommand(async () => {
      const args = readArgs(flags.args);
      if (!flags.module) {
        process.stderr.write(
          "soniq: enqueue without --module does not check the job name or arguments; the worker dead-letters unknown names (unknown_job) and invalid arguments (invalid_args). Pass --module ./jobs.ts to check them now.\n",
        );
      }
      await withInstance(
        flags,
        async (soniq) => {
          const id = await soniq.enqueue(name, args, {
            ...(flags.queue !== undefined ? { queue: flags.queue } : {}),
            ...(flags.delay !== undefined ? { delay: flags.delay } : {}),
            ...(flags.priority !== undefined ? { priority: flags.priority } : {}),
            ...(flags.dedupKey !== undefined ? { dedupKey: flags.dedupKey } : {}),
          });
          process.stdout.write(`${id}\n`);
        },
        { rejectUnknownJobs: false },
      );
    }),
  );
}
