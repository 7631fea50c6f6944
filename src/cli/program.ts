/**
 * The `soniq` program: its name, version and usage-error rule, and the list of its commands (one
 * module each under commands/; adding a command is one file there and one line in COMMANDS).
 * Exit codes: 0 drained / success, 1 shutdown deadline path taken, 2 start-up or configuration
 * error, 3 outcome not recorded (exit-codes.ts).
 */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import * as checkDeploy from "./commands/check-deploy.js";
import * as dashboard from "./commands/dashboard.js";
import * as dlq from "./commands/dlq.js";
import * as enqueue from "./commands/enqueue.js";
import * as jobs from "./commands/jobs.js";
import * as queues from "./commands/queues.js";
import * as recover from "./commands/recover.js";
import * as remote from "./commands/remote.js";
import * as schedules from "./commands/schedules.js";
import * as setup from "./commands/setup.js";
import * as status from "./commands/status.js";
import * as worker from "./commands/worker.js";
import * as workers from "./commands/workers.js";
import { EXIT } from "./exit-codes.js";
import { fail } from "./runner.js";

/** The commands, in `--help` order; each module adds its own to the program. */
const COMMANDS: readonly { register(program: Command): void }[] = [
  setup,
  worker,
  enqueue,
  recover,
  status,
  jobs,
  dlq,
  queues,
  workers,
  remote,
  schedules,
  checkDeploy,
  dashboard,
];

const { version } = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
) as { version: string };

const program = new Command()
  .name("soniq")
  .description("Background jobs in PostgreSQL or SQLite with a graceful-shutdown contract.")
  .version(version)
  .showHelpAfterError()
  // Usage errors are start-up errors: exit 2, never 1 (which means "the deadline path was taken").
  .exitOverride((err) => {
    process.exit(err.exitCode === 0 ? 0 : EXIT.STARTUP);
  })
  // A usage error carries a code like every other failure.
  .configureOutput({
    outputError: (text, write) => write(`soniq: INVALID_INPUT: ${text.replace(/^error: /, "")}`),
  });

for (const command of COMMANDS) command.register(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  fail(err);
}
