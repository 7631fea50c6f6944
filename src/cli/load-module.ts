import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { redactUrl } from "../backends/select.js";
import { SoniqError } from "../errors.js";
import { importUserModule } from "../jobs/import-user-module.js";
import { isSoniq, type Soniq } from "../soniq.js";

/**
 * Loads the user's module (JavaScript or TypeScript, ES module or CommonJS) and returns
 * the Soniq instance it exports: the default export, else an export named `soniq`, else the only
 * exported instance.
 * @throws SoniqError `MODULE_LOAD` when the file is missing, fails to load (the message names file, line and
 *   cause), or exports no instance.
 */
export async function loadSoniqModule(path: string): Promise<Soniq> {
  const absolute = resolve(path);
  if (!existsSync(absolute))
    throw new SoniqError("MODULE_LOAD", `module ${absolute} does not exist`);
  const mod = await importUserModule(absolute);
  if (isSoniq(mod.default)) return mod.default;
  if (isSoniq(mod.soniq)) return mod.soniq;
  const found = Object.values(mod).filter(isSoniq);
  if (found.length === 1) return found[0] as Soniq;
  throw new SoniqError(
    "MODULE_LOAD",
    found.length === 0
      ? `${absolute} exports no Soniq instance: add \`export const soniq = new Soniq(...)\` or a default export`
      : `${absolute} exports ${found.length} Soniq instances: export the one to run as \`soniq\` or default`,
  );
}

/**
 * The one rule every command applies to `--database-url` with a module: the flag is set as
 * `SONIQ_DATABASE_URL` before the module loads, so it becomes the database of an instance whose
 * code sets no `databaseUrl` (the default). Only a module whose own code gives its instance a
 * different URL conflicts; the error names where each value came from.
 * @param path - the user's module (as given on the command line).
 * @param databaseUrl - `--database-url`, when given.
 * @throws SoniqError `MODULE_LOAD` as {@link loadSoniqModule}; `INVALID_OPTION` when the module's
 *   code sets a different `databaseUrl` than `--database-url`.
 */
export async function loadModuleWithDatabase(
  path: string,
  databaseUrl: string | undefined,
): Promise<Soniq> {
  if (databaseUrl !== undefined) process.env.SONIQ_DATABASE_URL = databaseUrl;
  const soniq = await loadSoniqModule(path);
  if (databaseUrl !== undefined && soniq.settings.databaseUrl !== databaseUrl) {
    throw new SoniqError(
      "INVALID_OPTION",
      `--database-url is ${redactUrl(databaseUrl)}, but ${path} sets databaseUrl ${redactUrl(soniq.settings.databaseUrl)} in its own code (code wins over SONIQ_DATABASE_URL): drop --database-url, or let the module read SONIQ_DATABASE_URL`,
    );
  }
  return soniq;
}
