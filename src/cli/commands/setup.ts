/** `soniq setup`: creates or migrates Soniq's tables (idempotent). */
import type { Command } from "commander";
import { redactUrl } from "../../backends/select.js";
import { cliDefault } from "../../settings-docs.js";
import {
  type ConnectionFlags,
  connection,
  DATABASE_URL_HELP,
  print,
  runCommand,
  withDatabaseUrl,
  withInstance,
  withJson,
  withModule,
} from "../runner.js";

/** Adds `setup [module] [--module] [--database-url] [--json]` to `program`. */
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
  withJson(
    withModule(
      withDatabaseUrl(command, `${DATABASE_URL_HELP} (default: ${cliDefault("databaseUrl")})`),
    ),
  ).action((module: string | undefined, flags: ConnectionFlags & { json?: boolean }) =>
    runCommand(() =>
      withInstance(connection(module, flags), async (soniq) => {
        await soniq.setup();
        const { databaseUrl, schema } = soniq.settings;
        const postgres = databaseUrl.startsWith("postgres");
        const where = postgres
          ? `${redactUrl(databaseUrl)}, schema ${schema}`
          : redactUrl(databaseUrl);
        print(
          flags.json,
          { ready: true, databaseUrl: redactUrl(databaseUrl), schema: postgres ? schema : null },
          () => `soniq: schema ready (${where})`,
        );
      }),
    ),
  );
}
