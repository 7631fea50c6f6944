/**
 * The `soniq` program as a value: its name, version, usage-error rule and commands (one module each
 * under commands/; adding a command is one file there and one line in COMMANDS), built without
 * parsing anything — program.ts runs it on `process.argv`, and a test can run it in-process
 * (test/fuzz/cli-flags.test.ts). Exit codes: exit-codes.ts.
 */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { EXIT } from "./exit-codes.js";
import { shortenEchoes, wantsJson, writeJsonError } from "./runner.js";

/** A command module: adds its command to the program. */
type CommandModule = { register(program: Command): void };

/** The commands by name, in `--help` order, each loaded on demand. */
const COMMANDS: Readonly<Record<string, () => Promise<CommandModule>>> = {
  setup: () => import("./commands/setup.js"),
  worker: () => import("./commands/worker.js"),
  enqueue: () => import("./commands/enqueue.js"),
  recover: () => import("./commands/recover.js"),
  status: () => import("./commands/status.js"),
  jobs: () => import("./commands/jobs.js"),
  dlq: () => import("./commands/dlq.js"),
  queues: () => import("./commands/queues.js"),
  workers: () => import("./commands/workers.js"),
  remote: () => import("./commands/remote.js"),
  schedules: () => import("./commands/schedules.js"),
  flows: () => import("./commands/flows.js"),
  batches: () => import("./commands/batches.js"),
  "check-deploy": () => import("./commands/check-deploy.js"),
  dashboard: () => import("./commands/dashboard.js"),
};

const { version } = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
) as { version: string };

/**
 * A new `soniq` program with the command `named` registered (every command when `named` is not
 * one: help, a version flag, a usage error). Only that command's module is loaded, so `soniq
 * worker` does not carry the dashboard's or the operations commands' code. Usage errors call
 * `process.exit(2)` (start-up error, never 1) after printing `soniq: INVALID_INPUT: …` (and, with
 * `--json`, one `{"error":…}` line on standard output).
 */
export async function soniqProgram(named: string | undefined): Promise<Command> {
  const program = new Command()
    .name("soniq")
    .description("Background jobs in PostgreSQL or SQLite with a graceful-shutdown contract.")
    .version(version)
    .showHelpAfterError()
    // Usage errors are start-up errors: exit 2, never 1 (which means "the deadline path was taken");
    // with --json they are also `{"error":{"code":"INVALID_INPUT",…}}` on standard output.
    .exitOverride((err) => {
      if (err.exitCode === 0) process.exit(0);
      if (wantsJson()) {
        const message =
          err.code === "commander.help" ? "a subcommand is needed (see --help)" : err.message;
        const text = message.replace(/^error: /, "");
        writeJsonError("INVALID_INPUT", shortenEchoes(text, process.argv.slice(2)));
      }
      process.exit(EXIT.STARTUP);
    })
    // A usage error carries a code like every other failure.
    .configureOutput({
      outputError: (text, write) =>
        write(
          `soniq: INVALID_INPUT: ${shortenEchoes(text.replace(/^error: /, ""), process.argv.slice(2))}`,
        ),
    });

  const load =
    named !== undefined && Object.hasOwn(COMMANDS, named)
      ? [COMMANDS[named] as () => Promise<CommandModule>]
      : Object.values(COMMANDS);
  for (const module of await Promise.all(load.map((importer) => importer()))) {
    module.register(program);
  }
  return program;
}
