/** `soniq setup`: creates or migrates Soniq's tables (idempotent). */
import type { Command } from "commander";
import { redactUrl } from "../../backends/select.js";
import { cliDefault } from "../../settings-docs.js";
import {
  type ConnectionFlags,
  connection,
  DATABASE_URL_HELP,
  runCommand,
  withDatabaseUrl,
  withInstance,
} from "../runner.js";

/** Adds `setup [module] [--database-url]` to `program`. */
export function register(program: Command): void {
  const command = program
    .command("setup")
    .description(
      "Create or migrate Soniq's tables (idempotent; safe to run from several processes at once).",
    )
    .argument(
      "[module]",
      "your module exporting the Soniq instance (for its settings); default: SONIQ_* variables",
    );
  withDatabaseUrl(command, `${DATABASE_URL_HELP} (default: ${cliDefault("databaseUrl")})`).action(
    (module: string | undefined, flags: ConnectionFlags) =>
      runCommand(() =>
        withInstance(connection(module, flags), async (soniq) => {
          await soniq.setup();
          const { databaseUrl, schema } = soniq.settings;
          const where = databaseUrl.startsWith("postgres")
            ? `${redactUrl(databaseUrl)}, schema ${schema}`
            : redactUrl(databaseUrl);
          process.stdout.write(`soniq: schema ready (${where})\n`);
        }),
      ),
  );
}
