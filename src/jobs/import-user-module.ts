/**
 * Imports a user module — a jobs module or a thread-handler module, JavaScript or TypeScript, in
 * an ES-module or a CommonJS app — the same way on the main thread and on a worker thread.
 * TypeScript runs through tsx without a build step; a failure is one line naming file, line, cause.
 */
import { pathToFileURL } from "node:url";
import { isSoniqError, SoniqError } from "../errors.js";
import { describeLoadError } from "./describe-load-error.js";

let tsxRegistered: Promise<void> | undefined;

/** tsx's ES-module and CommonJS hooks: a `.ts` file in a CommonJS app is compiled to CommonJS. */
function registerTsx(): Promise<void> {
  tsxRegistered ??= (async () => {
    const esm = await import("tsx/esm/api");
    esm.register();
    const cjs = await import("tsx/cjs/api");
    cjs.register();
  })();
  return tsxRegistered;
}

/**
 * The exports of a module: an ES module's namespace; for CommonJS, whose namespace holds
 * `module.exports` as `default`, also `module.exports`'s own properties, and TypeScript's
 * `export default` compiled to CommonJS (`exports.default` beside `__esModule`) as `default`.
 */
function exportsOf(namespace: Record<string, unknown>): Record<string, unknown> {
  const moduleExports = namespace.default;
  if (typeof moduleExports !== "object" || moduleExports === null) return namespace;
  const proto: unknown = Object.getPrototypeOf(moduleExports);
  if (proto !== Object.prototype && proto !== null) return namespace; // a class instance
  const own = moduleExports as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...own, ...namespace };
  if (own.__esModule === true && "default" in own) merged.default = own.default;
  return merged;
}

/**
 * Imports `file` and returns its exports (see above for CommonJS).
 * @param file - an absolute path or a `file:` URL string.
 * @returns The module's exports by name.
 * @throws SoniqError `MODULE_LOAD` with `FILE:LINE:COL: Name: message` (and what to change for a
 *   CommonJS / ES-module mismatch) when the module fails to load or to run its top level.
 */
export async function importUserModule(file: string): Promise<Record<string, unknown>> {
  const url = file.startsWith("file:") ? file : pathToFileURL(file).href;
  if (/\.(m|c)?tsx?$/.test(url)) await registerTsx();
  try {
    return exportsOf((await import(url)) as Record<string, unknown>);
  } catch (err) {
    // Soniq's own errors from the module's top level (a bad job option…) already say what is wrong.
    if (isSoniqError(err)) throw err;
    throw new SoniqError("MODULE_LOAD", `could not load ${describeLoadError(err, url)}`, {
      cause: err,
    });
  }
}
