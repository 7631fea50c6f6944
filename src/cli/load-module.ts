import { existsSync } from "node:fs";
import { resolve } from "node:path";
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
