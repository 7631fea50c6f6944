/**
 * The `soniq` program: its name, version and usage-error rule, and the list of its commands (one
 * module each under commands/; adding a command is one file there and one line in COMMANDS).
 * Only the module of the command being run is loaded (all of them for help and usage errors), so
 * `soniq worker` does not carry the dashboard's or the operations commands' code.
 * Exit codes: 0 drained / success, 1 shutdown deadline path taken, 2 start-up or configuration
 * error, 3 outcome not recorded (exit-codes.ts).
 */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { handleClosedPipes } from "./closed-pipe.js";
import { EXIT } from "./exit-codes.js";
import { fail, wantsJson, writeJsonError } from "./runner.js";

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
  "check-deploy": () => import("./commands/check-deploy.js"),
  dashboard: () => import("./commands/dashboard.js"),
};

const { version } = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
) as { version: string };

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
      writeJsonError("INVALID_INPUT", message.replace(/^error: /, ""));
    }
    process.exit(EXIT.STARTUP);
  })
  // A usage error carries a code like every other failure.
  .configureOutput({
    outputError: (text, write) => write(`soniq: INVALID_INPUT: ${text.replace(/^error: /, "")}`),
  });

// The command named first on the line, or every command (help, a version flag, a usage error).
const named = process.argv[2];
// `soniq … | head`: a closed pipe ends a command quietly (exit 0); the worker ignores it.
handleClosedPipes(named === "worker" ? "ignore" : "exit");
const load =
  named !== undefined && Object.hasOwn(COMMANDS, named)
    ? [COMMANDS[named] as () => Promise<CommandModule>]
    : Object.values(COMMANDS);
for (const module of await Promise.all(load.map((importer) => importer()))) {
  module.register(program);
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  fail(err);
}
