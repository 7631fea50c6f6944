/**
 * Turns the error from importing a user module (a jobs module or a thread-handler module) into one
 * line that names the file, the line and the cause, and — for errors that come from the module
 * system (CommonJS vs ES modules) — says what to change.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Where a load error points: a file and, when known, a 1-based line and column. */
export interface LoadErrorLocation {
  file: string;
  line?: number;
  column?: number;
}

function text(value: unknown): string {
  try {
    return String(value);
  } catch {
    return "[unprintable]";
  }
}

function get(value: unknown, key: string): unknown {
  if (typeof value !== "object" || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function toPath(fileOrUrl: string): string {
  return fileOrUrl.startsWith("file:") ? fileURLToPath(fileOrUrl) : fileOrUrl;
}

/** The first `path:line[:column]` (or `file:///path:line`) in `source` that names a user file. */
function firstLocation(source: string): LoadErrorLocation | undefined {
  const re = /(?<![\w:/])((?:file:\/\/)?\/[^\s():'"]+):(\d+)(?::(\d+))?/g;
  for (const match of source.matchAll(re)) {
    const file = toPath(match[1] as string);
    if (file.includes("/node_modules/")) continue;
    return {
      file,
      line: Number(match[2]),
      ...(match[3] ? { column: Number(match[3]) } : {}),
    };
  }
  return undefined;
}

/** The line where `specifier` is imported in `file` (for "cannot find package/module" errors). */
function importLine(file: string, specifier: string): number | undefined {
  try {
    const lines = readFileSync(file, "utf8").split("\n");
    const index = lines.findIndex(
      (l) => l.includes(`"${specifier}"`) || l.includes(`'${specifier}'`),
    );
    return index >= 0 ? index + 1 : undefined;
  } catch {
    return undefined;
  }
}

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
}

/** `node --check` reports the line of a JavaScript syntax error that `import()` leaves out. */
function syntaxLocation(file: string): LoadErrorLocation | undefined {
  if (!/\.(m|c)?js$/.test(file)) return undefined;
  try {
    execFileSync(process.execPath, ["--check", file], { stdio: "pipe", timeout: 10_000 });
    return undefined;
  } catch (err) {
    return firstLocation(text(get(err, "stderr")));
  }
}

/**
 * What to change when the error comes from the module system, or undefined.
 * @param code - the error's `code` (e.g. `ERR_REQUIRE_ESM`).
 * @param message - the error's message.
 */
export function moduleSystemHint(code: string, message: string): string | undefined {
  if (code === "ERR_REQUIRE_ESM" || code === "ERR_REQUIRE_ASYNC_MODULE")
    return 'Soniq is an ES module: requiring it from CommonJS needs Node.js >= 20.19; upgrade Node.js, or make your app an ES module ("type": "module" in package.json)';
  if (code === "ERR_REQUIRE_CYCLE_MODULE")
    return 'this CommonJS file uses ES module syntax in an import cycle: add "type": "module" to your package.json (or name the file .mts/.mjs)';
  if (code === "ERR_PACKAGE_PATH_NOT_EXPORTED" && /soniq/.test(message))
    return 'import Soniq by its package name only: `import { Soniq } from "soniq"` (or `require("soniq")`), not a path inside it';
  if (/Cannot use import statement outside a module/.test(message))
    return 'this file is loaded as CommonJS: add "type": "module" to your package.json, name the file .mjs, or use require()';
  if (
    /(require|exports|module|__dirname|__filename) is not defined in ES module scope/.test(message)
  )
    return 'this file is an ES module ("type": "module" or .mjs): use import and import.meta.url instead of require, exports, module or __dirname, or name the file .cjs';
  return undefined;
}

/**
 * Describes why `file` failed to load, in one line: `FILE:LINE:COL: Name: message` followed by a
 * hint for module-system errors. Total: it never throws.
 * @param error - what `import()` threw.
 * @param file - the module that was imported (absolute path or `file:` URL).
 */
export function describeLoadError(error: unknown, file: string): string {
  const path = toPath(file);
  const name = text(get(error, "name") ?? "Error");
  const code = text(get(error, "code") ?? "");
  const rawMessage = get(error, "message");
  let message = typeof rawMessage === "string" ? rawMessage : text(error);
  const stack = text(get(error, "stack") ?? "");
  // tsx's TransformError: "Transform failed with 1 error:\n/path/x.ts:2:20: ERROR: Unexpected ';'".
  let where = firstLocation(message);
  if (where) message = message.replace(/^Transform failed with \d+ errors?:\s*/, "");
  const missing =
    /Cannot find (?:package|module) '([^']+)'(?: imported from (\S+)|\s*Require stack:\s*- (\S+))/.exec(
      message,
    );
  if (!where && missing) {
    const from = toPath((missing[2] ?? missing[3]) as string);
    const line = importLine(from, missing[1] as string);
    where = line === undefined ? { file: from } : { file: from, line };
  }
  // Link errors ("does not provide an export named …") put "file:///x.mjs:1" before the name.
  where ??= firstLocation(stack.split(`${name}:`)[0] ?? "");
  if (!where && name === "SyntaxError") where = syntaxLocation(path);
  // An error thrown while the module's top level ran: its first frame in a user file.
  where ??= firstLocation(stack.split("\n").slice(1).join("\n"));
  where ??= { file: path };
  const at = `${where.file}${where.line ? `:${where.line}` : ""}${where.column ? `:${where.column}` : ""}`;
  const shown = message.split("\n")[0]?.replace(`${at}: `, "") ?? "";
  const label = code && !name.includes(code) ? `${name} [${code}]` : name;
  const bare = missing && !/^[./]|^file:|^node:/.test(missing[1] as string);
  const hint =
    moduleSystemHint(code, message) ??
    (bare ? `install it in your app: npm install ${packageName(missing[1] as string)}` : undefined);
  const via = where.file === path ? "" : ` (loading ${path})`;
  return `${at}: ${label}: ${shown}${via}${hint ? ` — ${hint}` : ""}`;
}
