/**
 * The shared runner of `soniq` commands: opens the instance (the user's module, or a bare one from
 * flags and `SONIQ_*` variables), prints text or `--json`, closes the instance, and maps every
 * error to `soniq: <message>` on standard error and exit code 2 (start-up or configuration error).
 */
import { type Command, InvalidArgumentError } from "commander";
import { errorJson } from "../admin/json/error.js";
import { visibleText } from "../admin/visible-text.js";
import { SoniqError } from "../errors.js";
import { Soniq } from "../soniq.js";
import { ECHO_MAX_CHARS, echoed } from "../value-text.js";
import { isClosedPipe } from "./closed-pipe.js";
import { toSoniqError } from "./errors.js";
import { EXIT } from "./exit-codes.js";
import { loadModuleWithDatabase } from "./load-module.js";

/** Flags that say which instance a command uses. */
export interface ConnectionFlags {
  /**
   * `--database-url`: the database of the bare instance, or of the module's instance when its
   * code sets no `databaseUrl` (load-module.ts, {@link loadModuleWithDatabase}).
   */
  databaseUrl?: string;
  /** Path of the user's module exporting the Soniq instance (`--module`, or the positional). */
  module?: string;
}

/** Settings a bare instance (no module) may set beyond the flags. */
export interface BareSettings {
  /** Enqueue by a name no definition declares is not an error (no module, no registry). */
  rejectUnknownJobs?: boolean;
}

/** The description of `--database-url` shared by the commands that accept it. */
export const DATABASE_URL_HELP = "postgres://…, sqlite:PATH or memory:";

/** Adds `--database-url <url>` to a command. */
export function withDatabaseUrl(command: Command, description = DATABASE_URL_HELP): Command {
  return command.option("--database-url <url>", description);
}

/** The description of `--module` shared by every command. */
export const MODULE_HELP = "your module exporting the Soniq instance (its settings and jobs)";

/** Adds `--module <module>` to a command. */
export function withModule(command: Command, description = MODULE_HELP): Command {
  return command.option("--module <module>", description);
}

/** Adds `--json` (print JSON for scripts) to a command. */
export function withJson(command: Command): Command {
  return command.option("--json", "print JSON for scripts");
}

/** A commander argument parser for a finite number; `name` is used in the error message. */
export function number(name: string): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n))
      throw new InvalidArgumentError(`${name} must be a number`);
    return n;
  };
}

/**
 * Whether the command line asks for JSON: `--json` anywhere before a `--` (so also when commander
 * refused the line before parsing its options).
 */
export function wantsJson(argv: readonly string[] = process.argv): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}

/**
 * Writes a failure as one line of JSON on standard output: `{"error":{"code","message"}}`
 * (admin/json/error.ts; the message without its `CODE: ` prefix). Standard output, so a script
 * reads one document whatever happened; the exit code (2) says it is an error.
 */
export function writeJsonError(code: string, message: string): void {
  const text = message.startsWith(`${code}: `) ? message.slice(code.length + 2) : message;
  process.stdout.write(visibleText(`${JSON.stringify(errorJson(code, text.trim()))}\n`));
}

/**
 * `message` with every echo of a command-line argument longer than {@link ECHO_MAX_CHARS}
 * characters (a 1 MB id, a pasted file) cut to its start and its length (value-text.ts `echoed`),
 * so an error stays one readable line. Shorter arguments are echoed whole.
 */
export function shortenEchoes(message: string, args: readonly string[]): string {
  let text = message;
  const long = [...new Set(args.filter((a) => a.length > ECHO_MAX_CHARS))].sort(
    (a, b) => b.length - a.length,
  );
  for (const arg of long) text = text.split(arg).join(echoed(arg));
  // An argument the message quotes only in part (or after an `--opt=` prefix) is still cut:
  // no run of text longer than a long argument's echo survives whole.
  return text.replace(/[^\s"'`]{1000,}/g, (run) => echoed(run));
}

/** What the running command connects to (a URL or a path), named in connection errors. */
let connectingTo: string | undefined;

/**
 * Prints `soniq: <CODE>: <message>` on standard error (and, with `--json`, `{"error":{code,
 * message}}` on standard output) and exits with code 2. Every failure carries a Soniq error code
 * (errors.ts turns driver errors into one).
 */
export function fail(err: unknown): never {
  // The reader of the output went away (`soniq … | head`): nothing to report (closed-pipe.ts).
  if (isClosedPipe(err)) process.exit(0);
  const error = toSoniqError(err, connectingTo);
  const message = shortenEchoes(error.message, process.argv.slice(2));
  process.stderr.write(visibleText(`soniq: ${message}\n`));
  if (wantsJson()) writeJsonError(error.code, message);
  process.exit(EXIT.STARTUP);
}

/** The instance to use: the module's, or a bare one from flags and `SONIQ_*` variables. */
export async function openInstance(
  flags: ConnectionFlags,
  bare: BareSettings = {},
): Promise<Soniq> {
  if (flags.module) {
    const soniq = await loadModuleWithDatabase(flags.module, flags.databaseUrl);
    connectingTo = soniq.settings.databaseUrl;
    return soniq;
  }
  const url = flags.databaseUrl ?? process.env.SONIQ_DATABASE_URL ?? "";
  connectingTo = url || undefined;
  if (/^memory:/i.test(url)) {
    process.stderr.write(
      "soniq: memory: lives only inside this one process; nothing the CLI writes there outlives it\n",
    );
  }
  return new Soniq({
    ...(flags.databaseUrl ? { databaseUrl: flags.databaseUrl } : {}),
    ...bare,
    logLevel: process.env.SONIQ_LOG_LEVEL ? undefined : "warn",
  });
}

/**
 * Runs one command's body; any error it throws ends the process with `soniq: <message>` and
 * exit code 2. On success the process ends when the event loop empties (exit code 0).
 */
export async function runCommand(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    fail(err);
  }
}

/**
 * Opens the instance `flags` name, runs `body` with it, then closes it. Errors propagate (run it
 * inside {@link runCommand}); the instance is not closed then, as the process exits at once.
 */
export async function withInstance(
  flags: ConnectionFlags,
  body: (soniq: Soniq) => Promise<void>,
  bare: BareSettings = {},
): Promise<void> {
  const soniq = await openInstance(flags, bare);
  await body(soniq);
  await soniq.close();
}

/**
 * The connection flags of a command that also takes the module as an optional positional
 * argument (`soniq status ./jobs.ts`, kept for existing scripts) beside `--module`.
 * @throws SoniqError `INVALID_OPTION` when both name different modules.
 */
export function connection(module: string | undefined, flags: ConnectionFlags): ConnectionFlags {
  if (module && flags.module && module !== flags.module) {
    throw new SoniqError(
      "INVALID_OPTION",
      `two modules given: ${module} (argument) and ${flags.module} (--module); give one`,
    );
  }
  return { ...flags, ...(module ? { module } : {}) };
}

/**
 * Writes one result to standard output: `value` as one line of JSON with `--json`, else `text`.
 * Bidirectional-control characters are written as their escapes (`\u202E`; the same value in
 * JSON), so stored text cannot reorder what the terminal shows (admin/visible-text.ts).
 */
export function print(json: boolean | undefined, value: unknown, text: () => string): void {
  process.stdout.write(visibleText(json ? `${JSON.stringify(value)}\n` : `${text()}\n`));
}
