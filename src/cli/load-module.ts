import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { SoniqError } from "../errors.js";
import { isSoniq, type Soniq } from "../soniq.js";

let tsxRegistered = false;

/**
 * Loads the user's module (JavaScript, or TypeScript via tsx without a build step) and returns
 * the Soniq instance it exports: the default export, else an export named `soniq`, else the only
 * exported instance.
 * @throws SoniqError `MODULE_LOAD` when the file is missing, fails to load, or exports no instance.
 */
export async function loadSoniqModule(path: string): Promise<Soniq> {
  const absolute = resolve(path);
  if (!existsSync(absolute))
    throw new SoniqError("MODULE_LOAD", `module ${absolute} does not exist`);
  if (/\.(m|c)?tsx?$/.test(absolute) && !tsxRegistered) {
    const { register } = await import("tsx/esm/api");
    register();
    tsxRegistered = true;
  }
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof SoniqError) throw err;
    throw new SoniqError("MODULE_LOAD", `could not load ${absolute}: ${String(err)}`, {
      cause: err,
    });
  }
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
