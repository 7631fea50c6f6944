/**
 * Soniq's settings: every option, its `SONIQ_*` environment variable, default and unit.
 * Options passed in code win over the environment, which wins over the defaults. Unknown
 * options, unknown `SONIQ_*` variables and out-of-range values are errors, never ignored.
 * Durations are **seconds** (as in the shutdown contract, seed 000), fractions allowed.
 */
import { z } from "zod";
import { SoniqError } from "./errors.js";

const seconds = (min: number, max: number) => z.number().finite().min(min).max(max);
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** The settings schema (zod); see {@link SoniqSettings} for each field's meaning. */
export const settingsSchema = z.strictObject({
  databaseUrl: z.string().min(1).default("sqlite:./soniq.db"),
  schema: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, "a lower-case SQL identifier")
    .refine(
      (name) => !name.startsWith("pg_") && name !== "information_schema",
      "not a system schema",
    )
    .default("public"),
  poolSize: z.number().int().min(1).max(1000).default(10),
  concurrency: z.number().int().min(1).max(10_000).default(10),
  queues: z
    .array(z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/, "letters, digits and _ . : -"))
    .min(1)
    .nullable()
    .default(null),
  shutdownTimeout: seconds(0, 86_400).default(30),
  shutdownSettle: seconds(0, 60).default(2),
  jobTimeout: seconds(0, 86_400 * 7).default(300),
  heartbeatInterval: seconds(0.05, 3600).default(5),
  heartbeatTimeout: seconds(0.1, 86_400).default(30),
  pollInterval: seconds(0.01, 3600).default(1),
  resultRetention: seconds(0, 86_400 * 365).default(7 * 86_400),
  maxAttempts: z.number().int().min(1).max(1000).default(5),
  maxInterruptions: z.number().int().min(0).max(1000).default(3),
  maxPayloadBytes: z
    .number()
    .int()
    .min(64)
    .max(256 * 1024 * 1024)
    .default(1024 * 1024),
  rejectUnknownJobs: z.boolean().default(true),
  logLevel: z.enum(LOG_LEVELS).default("info"),
  logArgs: z.boolean().default(false),
  syncHandlerPoolSize: z.number().int().min(1).max(1024).default(8),
  syncHandlerGraceSeconds: seconds(0, 86_400 * 7)
    .nullable()
    .default(null),
});

/** Resolved settings (every field present). */
export type SoniqSettings = z.output<typeof settingsSchema>;

/**
 * Options accepted by `new Soniq(options)`. Each may also come from the environment variable
 * shown (`SONIQ_` + the name in SCREAMING_SNAKE_CASE).
 */
export interface SoniqSettingsInput {
  /** `SONIQ_DATABASE_URL`. `postgres://…`, `sqlite:PATH` (or a `.db`/`.sqlite` path), `memory:`. Default `sqlite:./soniq.db`. */
  databaseUrl?: string;
  /** `SONIQ_SCHEMA`. PostgreSQL schema for Soniq's tables. Default `public`. */
  schema?: string;
  /** `SONIQ_POOL_SIZE`. PostgreSQL connections in the pool. Default 10. */
  poolSize?: number;
  /** `SONIQ_CONCURRENCY`. Jobs a worker runs at once (its slots). Default 10. */
  concurrency?: number;
  /** `SONIQ_QUEUES` (comma-separated). Queues a worker claims from; `null` = all. Default all. */
  queues?: string[] | null;
  /** `SONIQ_SHUTDOWN_TIMEOUT`. Seconds a drain waits for in-flight jobs before releasing them. Default 30. */
  shutdownTimeout?: number;
  /** `SONIQ_SHUTDOWN_SETTLE`. Seconds an aborted handler gets to unwind before its row is NACK'd. Default 2. */
  shutdownSettle?: number;
  /** `SONIQ_JOB_TIMEOUT`. Default per-job timeout in seconds; 0 = none. Default 300. */
  jobTimeout?: number;
  /** `SONIQ_HEARTBEAT_INTERVAL`. Seconds between worker heartbeats. Default 5. */
  heartbeatInterval?: number;
  /** `SONIQ_HEARTBEAT_TIMEOUT`. Seconds without a heartbeat after which a worker is not live. Default 30. */
  heartbeatTimeout?: number;
  /** `SONIQ_POLL_INTERVAL`. Seconds between polls when no wake-up arrives. Default 1. */
  pollInterval?: number;
  /** `SONIQ_RESULT_RETENTION`. Seconds a done or cancelled job (and its result) is kept. Default 604800 (7 days). */
  resultRetention?: number;
  /** `SONIQ_MAX_ATTEMPTS`. Default runs per job before the dead-letter queue. Default 5. */
  maxAttempts?: number;
  /**
   * `SONIQ_MAX_INTERRUPTIONS`. Crash recoveries a job may have (its worker died or stopped
   * heartbeating while running it) before the next one moves it to the dead-letter queue with
   * reason `crash_loop`. Default 3.
   */
  maxInterruptions?: number;
  /** `SONIQ_MAX_PAYLOAD_BYTES`. Largest JSON of arguments or result, in bytes (UTF-8). Default 1048576 (1 MiB). */
  maxPayloadBytes?: number;
  /** `SONIQ_REJECT_UNKNOWN_JOBS`. Enqueue by an unregistered name is an error. Default true. */
  rejectUnknownJobs?: boolean;
  /** `SONIQ_LOG_LEVEL`. fatal, error, warn, info, debug, trace or silent. Default info. */
  logLevel?: (typeof LOG_LEVELS)[number];
  /** `SONIQ_LOG_ARGS`. Include job arguments in log lines. Default false. */
  logArgs?: boolean;
  /** `SONIQ_SYNC_HANDLER_POOL_SIZE`. Worker threads running sync handlers at once. Default 8. */
  syncHandlerPoolSize?: number;
  /**
   * `SONIQ_SYNC_HANDLER_GRACE_SECONDS`. Flat budget in seconds, from the FORCE_TIMEOUT_PATH
   * instant, that a drain waits for running sync handlers before logging WAIT_FOR_THREAD (it then
   * keeps waiting). Default `null` = the instance's `jobTimeout`.
   */
  syncHandlerGraceSeconds?: number | null;
}

type SettingKey = keyof SoniqSettings;
const KEYS = Object.keys(settingsSchema.shape) as SettingKey[];

/** `databaseUrl` → `SONIQ_DATABASE_URL`. */
export function envName(key: string): string {
  return `SONIQ_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

const ENV_TO_KEY = new Map<string, SettingKey>(KEYS.map((key) => [envName(key), key]));

/** The zod type under `.default()` / `.nullable()` wrappers ("number", "boolean", "string", …). */
function baseType(schema: z.ZodType): string {
  let def = schema._zod.def as { type: string; innerType?: z.ZodType };
  while (
    def.innerType &&
    (def.type === "default" || def.type === "nullable" || def.type === "optional")
  ) {
    def = def.innerType._zod.def as { type: string; innerType?: z.ZodType };
  }
  return def.type;
}

/** Converts a `SONIQ_*` string to the type the setting's schema expects. */
function fromEnv(key: SettingKey, raw: string): unknown {
  const text = raw.trim();
  if (key === "queues") {
    const list = text
      .split(",")
      .map((q) => q.trim())
      .filter((q) => q.length > 0);
    return list.length === 0 ? null : list;
  }
  const inner = settingsSchema.shape[key];
  if (text === "" && inner.safeParse(null).success) return null;
  const type = baseType(inner);
  if (type === "number") {
    // Plain decimal only: Number() would also read "0x10", "1e3" or " ".
    return /^[+-]?(\d+\.?\d*|\.\d+)$/.test(text) ? Number(text) : raw;
  }
  if (type === "boolean") {
    const v = text.toLowerCase();
    if (["1", "true", "yes", "on"].includes(v)) return true;
    if (["0", "false", "no", "off"].includes(v)) return false;
  }
  return raw;
}

/**
 * Resolves settings from options, then `SONIQ_*` variables in `env`, then defaults.
 * @param options - options given in code (win over the environment).
 * @param env - environment to read `SONIQ_*` from (default `process.env`).
 * @throws SoniqError `INVALID_OPTION` naming every unknown option or variable and every bad value.
 */
export function resolveSettings(
  options: Record<string, unknown> = {},
  env: Record<string, string | undefined> = process.env,
): SoniqSettings {
  const merged: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith("SONIQ_") || raw === undefined) continue;
    const key = ENV_TO_KEY.get(name);
    if (!key) {
      problems.push(
        `unknown environment variable ${name} (known: ${[...ENV_TO_KEY.keys()].join(", ")})`,
      );
      continue;
    }
    merged[key] = fromEnv(key, raw);
  }
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) merged[key] = value;
  }
  const parsed = settingsSchema.safeParse(merged);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === "unrecognized_keys") {
        problems.push(`unknown option(s) ${issue.keys.join(", ")}`);
        continue;
      }
      const key = String(issue.path[0] ?? "");
      const source =
        key in options && options[key] !== undefined ? key : `${key} (${envName(key)})`;
      problems.push(`${source}: ${issue.message}`);
    }
  }
  if (parsed.success) problems.push(...crossFieldProblems(parsed.data));
  if (problems.length > 0 || !parsed.success) {
    throw new SoniqError("INVALID_OPTION", problems.join("; "), { details: { problems } });
  }
  return parsed.data;
}

/** Rules between settings: a worker must heartbeat more often than it is declared dead. */
export function crossFieldProblems(
  settings: Pick<SoniqSettings, "heartbeatInterval" | "heartbeatTimeout">,
): string[] {
  if (settings.heartbeatTimeout <= settings.heartbeatInterval) {
    return [
      `heartbeatTimeout (${settings.heartbeatTimeout} s) must be longer than heartbeatInterval (${settings.heartbeatInterval} s), or every worker looks dead`,
    ];
  }
  return [];
}

/** The keys of {@link SoniqSettings}, in declaration order (for docs and `--help`). */
export const SETTING_KEYS: readonly SettingKey[] = KEYS;
