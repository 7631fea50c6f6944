/**
 * Soniq's settings, each declared once in {@link SETTINGS} (type, default, unit, doc; its `SONIQ_*`
 * variable is derived from its key), and the types derived from them: the zod schema, the input
 * type, the resolved type. Reading `SONIQ_*` variables and resolving options live in
 * `settings-resolution.ts`. Durations are **seconds**, fractions allowed. The README's settings
 * table and the comment above each declaration are generated from them (`npm run docs:settings`;
 * test/unit/settings-docs.test.ts).
 */
import { z } from "zod";

/** What a numeric setting counts. */
export type SettingUnit =
  | "seconds"
  | "bytes"
  | "connections"
  | "jobs"
  | "runs"
  | "recoveries"
  | "threads";

/** One setting's declaration: everything else about it is derived from this. */
export interface SettingDeclaration<T extends z.ZodType = z.ZodType> {
  /** The values accepted (validation, ranges and the input type come from it). */
  type: T;
  /** The value used when neither an option nor a `SONIQ_*` variable gives one. */
  default: z.output<T>;
  /** What a number counts; `null` for text, booleans, lists. */
  unit: SettingUnit | null;
  /** One or two sentences: what the setting does (README table, TSDoc). */
  doc: string;
  /** How the default reads in docs when its value alone says too little (`null` → "all"). */
  defaultText?: string;
  /** Reads the `SONIQ_*` text when the type's own rule (number, boolean, text) does not fit. */
  fromEnv?: (text: string) => unknown;
}

/** Declares one setting (keeps `default` typed by `type`). */
function setting<T extends z.ZodType>(declaration: SettingDeclaration<T>): SettingDeclaration<T> {
  return declaration;
}

const seconds = (min: number, max: number) => z.number().finite().min(min).max(max);
const DAY = 86_400;

/**
 * Every setting, in documentation order. The comment above each one is generated from its
 * declaration by `npm run docs:settings` (edit the declaration, then run it).
 */
export const SETTINGS = {
  /**
   * `SONIQ_DATABASE_URL`. `postgres://…`, `sqlite:PATH` (or a path ending `.db`/`.sqlite`) or
   * `memory:`. Accepts text. Default `sqlite:./soniq.db`.
   */
  databaseUrl: setting({
    type: z.string().min(1),
    default: "sqlite:./soniq.db",
    unit: null,
    doc: "`postgres://…`, `sqlite:PATH` (or a path ending `.db`/`.sqlite`) or `memory:`.",
  }),
  /**
   * `SONIQ_SCHEMA`. PostgreSQL schema for Soniq's tables: a lower-case SQL identifier, not a system
   * schema. Accepts text. Default `public`.
   */
  schema: setting({
    type: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, "a lower-case SQL identifier")
      .refine(
        (name) => !name.startsWith("pg_") && name !== "information_schema",
        "not a system schema",
      ),
    default: "public",
    unit: null,
    doc: "PostgreSQL schema for Soniq's tables: a lower-case SQL identifier, not a system schema.",
  }),
  /**
   * `SONIQ_POOL_SIZE`. PostgreSQL connections in the pool. Accepts integer 1–1000 connections.
   * Default 10.
   */
  poolSize: setting({
    type: z.number().int().min(1).max(1000),
    default: 10,
    unit: "connections",
    doc: "PostgreSQL connections in the pool.",
  }),
  /**
   * `SONIQ_POOLER`. PostgreSQL: `transaction` when `databaseUrl` goes through a transaction-mode
   * pooler (PgBouncer `pool_mode = transaction`): no session settings, no named prepared
   * statements, no cancel by server process id, wake-ups over `listenUrl` or by polling
   * (docs/backends.md). `none`: direct, or a session-mode pooler. Accepts none, transaction.
   * Default `none`.
   */
  pooler: setting({
    type: z.enum(["none", "transaction"]),
    default: "none",
    unit: null,
    doc: "PostgreSQL: `transaction` when `databaseUrl` goes through a transaction-mode pooler (PgBouncer `pool_mode = transaction`): no session settings, no named prepared statements, no cancel by server process id, wake-ups over `listenUrl` or by polling (docs/backends.md). `none`: direct, or a session-mode pooler.",
  }),
  /**
   * `SONIQ_LISTEN_URL`. PostgreSQL: the URL of the dedicated LISTEN connection, straight to
   * PostgreSQL (LISTEN does not survive a transaction-mode pooler). `null` = `databaseUrl`, or,
   * with `pooler: "transaction"`, no LISTEN: other processes' jobs are picked up by polling
   * (`pollInterval`). Accepts text, or null. Default `databaseUrl`; none when `pooler` is
   * `transaction`.
   */
  listenUrl: setting({
    type: z
      .string()
      .regex(/^postgres(ql)?:\/\//i, "a postgres:// URL")
      .nullable(),
    default: null,
    defaultText: "`databaseUrl`; none when `pooler` is `transaction`",
    unit: null,
    doc: 'PostgreSQL: the URL of the dedicated LISTEN connection, straight to PostgreSQL (LISTEN does not survive a transaction-mode pooler). `null` = `databaseUrl`, or, with `pooler: "transaction"`, no LISTEN: other processes\' jobs are picked up by polling (`pollInterval`).',
  }),
  /**
   * `SONIQ_CONCURRENCY`. Jobs a worker runs at once (its slots). Accepts integer 1–10000 jobs.
   * Default 10.
   */
  concurrency: setting({
    type: z.number().int().min(1).max(10_000),
    default: 10,
    unit: "jobs",
    doc: "Jobs a worker runs at once (its slots).",
  }),
  /**
   * `SONIQ_PREFETCH`. Most jobs a worker claims beyond its free slots, into a buffer whose size
   * follows its start rate and claim time (none when jobs start rarely); 0 = off. Buffered jobs are
   * `processing`, NACK'd at drain start (docs/shutdown.md). Accepts integer 0–10000 jobs. Default
   * 500.
   */
  prefetch: setting({
    type: z.number().int().min(0).max(10_000),
    default: 500,
    unit: "jobs",
    doc: "Most jobs a worker claims beyond its free slots, into a buffer whose size follows its start rate and claim time (none when jobs start rarely); 0 = off. Buffered jobs are `processing`, NACK'd at drain start (docs/shutdown.md).",
  }),
  /**
   * `SONIQ_QUEUES`. Queues a worker claims from (comma-separated in the variable); `null` = all.
   * Accepts list of names, or null. Default all.
   */
  queues: setting({
    type: z
      .array(z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/, "letters, digits and _ . : -"))
      .min(1)
      .nullable(),
    default: null,
    defaultText: "all",
    unit: null,
    doc: "Queues a worker claims from (comma-separated in the variable); `null` = all.",
    fromEnv: (text) => {
      const list = text
        .split(",")
        .map((q) => q.trim())
        .filter((q) => q.length > 0);
      return list.length === 0 ? null : list;
    },
  }),
  /**
   * `SONIQ_SHUTDOWN_TIMEOUT`. How long a drain waits for in-flight jobs before NACKing them.
   * Accepts 0–86400 seconds. Default 30.
   */
  shutdownTimeout: setting({
    type: seconds(0, DAY),
    default: 30,
    unit: "seconds",
    doc: "How long a drain waits for in-flight jobs before NACKing them.",
  }),
  /**
   * `SONIQ_SHUTDOWN_SETTLE`. How long an aborted handler gets to unwind before its row is NACK'd.
   * Accepts 0–60 seconds. Default 2.
   */
  shutdownSettle: setting({
    type: seconds(0, 60),
    default: 2,
    unit: "seconds",
    doc: "How long an aborted handler gets to unwind before its row is NACK'd.",
  }),
  /**
   * `SONIQ_JOB_TIMEOUT`. Default `timeout` of a job; 0 = none. Accepts 0–604800 seconds. Default
   * 300.
   */
  jobTimeout: setting({
    type: seconds(0, 7 * DAY),
    default: 300,
    unit: "seconds",
    doc: "Default `timeout` of a job; 0 = none.",
  }),
  /**
   * `SONIQ_HEARTBEAT_INTERVAL`. Time between worker heartbeats. Accepts 0.05–3600 seconds. Default
   * 5.
   */
  heartbeatInterval: setting({
    type: seconds(0.05, 3600),
    default: 5,
    unit: "seconds",
    doc: "Time between worker heartbeats.",
  }),
  /**
   * `SONIQ_HEARTBEAT_TIMEOUT`. Time without a heartbeat after which a worker is not live; must
   * exceed `heartbeatInterval`. Accepts 0.1–86400 seconds. Default 30.
   */
  heartbeatTimeout: setting({
    type: seconds(0.1, DAY),
    default: 30,
    unit: "seconds",
    doc: "Time without a heartbeat after which a worker is not live; must exceed `heartbeatInterval`.",
  }),
  /**
   * `SONIQ_POLL_INTERVAL`. Time between polls when no wake-up arrives. Accepts 0.01–3600 seconds.
   * Default 1.
   */
  pollInterval: setting({
    type: seconds(0.01, 3600),
    default: 1,
    unit: "seconds",
    doc: "Time between polls when no wake-up arrives.",
  }),
  /**
   * `SONIQ_RESULT_RETENTION`. How long a done or cancelled job (and its result and dedup key) is
   * kept; 0 keeps nothing (deleted when it finishes). A job definition's `resultRetention`
   * overrides it. Accepts 0–31536000 seconds. Default 604800 (7 days).
   */
  resultRetention: setting({
    type: seconds(0, 365 * DAY),
    default: 7 * DAY,
    unit: "seconds",
    doc: "How long a done or cancelled job (and its result and dedup key) is kept; 0 keeps nothing (deleted when it finishes). A job definition's `resultRetention` overrides it.",
  }),
  /**
   * `SONIQ_DEAD_LETTER_RETENTION`. How long a dead-letter entry is kept before the pruner deletes
   * it; 0 keeps them for ever. Accepts 0–315360000 seconds. Default 2592000 (30 days).
   */
  deadLetterRetention: setting({
    type: seconds(0, 3650 * DAY),
    default: 30 * DAY,
    unit: "seconds",
    doc: "How long a dead-letter entry is kept before the pruner deletes it; 0 keeps them for ever.",
  }),
  /**
   * `SONIQ_JOB_EVENT_RETENTION`. How long a job's timeline events (NACK, recovery, retry, cancel,
   * …) are kept; 0 keeps them for ever. Accepts 0–315360000 seconds. Default 2592000 (30 days).
   */
  jobEventRetention: setting({
    type: seconds(0, 3650 * DAY),
    default: 30 * DAY,
    unit: "seconds",
    doc: "How long a job's timeline events (NACK, recovery, retry, cancel, …) are kept; 0 keeps them for ever.",
  }),
  /**
   * `SONIQ_MAX_ATTEMPTS`. Default runs per job before the dead-letter queue. Accepts integer 1–1000
   * runs. Default 5.
   */
  maxAttempts: setting({
    type: z.number().int().min(1).max(1000),
    default: 5,
    unit: "runs",
    doc: "Default runs per job before the dead-letter queue.",
  }),
  /**
   * `SONIQ_MAX_INTERRUPTIONS`. Crash recoveries (its worker died or stopped heartbeating) a job may
   * have; the next one moves it to the dead-letter queue (`crash_loop`). Accepts integer 0–1000
   * recoveries. Default 3.
   */
  maxInterruptions: setting({
    type: z.number().int().min(0).max(1000),
    default: 3,
    unit: "recoveries",
    doc: "Crash recoveries (its worker died or stopped heartbeating) a job may have; the next one moves it to the dead-letter queue (`crash_loop`).",
  }),
  /**
   * `SONIQ_MAX_PAYLOAD_BYTES`. Largest JSON (UTF-8) of a job's arguments or result. Accepts integer
   * 64–268435456 bytes. Default 1048576 (1 MiB).
   */
  maxPayloadBytes: setting({
    type: z
      .number()
      .int()
      .min(64)
      .max(256 * 1024 * 1024),
    default: 1024 * 1024,
    unit: "bytes",
    doc: "Largest JSON (UTF-8) of a job's arguments or result.",
  }),
  /**
   * `SONIQ_REJECT_UNKNOWN_JOBS`. Enqueue by an unregistered name is an error. Accepts true, false.
   * Default true.
   */
  rejectUnknownJobs: setting({
    type: z.boolean(),
    default: true,
    unit: null,
    doc: "Enqueue by an unregistered name is an error.",
  }),
  /**
   * `SONIQ_LOG_LEVEL`. Least severe level of the log lines written. Accepts fatal, error, warn,
   * info, debug, trace, silent. Default `info`.
   */
  logLevel: setting({
    type: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
    default: "info",
    unit: null,
    doc: "Least severe level of the log lines written.",
  }),
  /** `SONIQ_LOG_ARGS`. Include job arguments in log lines. Accepts true, false. Default false. */
  logArgs: setting({
    type: z.boolean(),
    default: false,
    unit: null,
    doc: "Include job arguments in log lines.",
  }),
  /**
   * `SONIQ_SYNC_HANDLER_POOL_SIZE`. Worker threads running sync handlers at once. Accepts integer
   * 1–1024 threads. Default 8.
   */
  syncHandlerPoolSize: setting({
    type: z.number().int().min(1).max(1024),
    default: 8,
    unit: "threads",
    doc: "Worker threads running sync handlers at once.",
  }),
  /**
   * `SONIQ_SYNC_HANDLER_GRACE_SECONDS`. Flat budget from the FORCE_TIMEOUT_PATH instant for running
   * sync handlers before WAIT_FOR_THREAD is logged (the drain keeps waiting); `null` =
   * `jobTimeout`. Accepts 0–604800, or null seconds. Default = `jobTimeout`.
   */
  syncHandlerGraceSeconds: setting({
    type: seconds(0, 7 * DAY).nullable(),
    default: null,
    defaultText: "= `jobTimeout`",
    unit: "seconds",
    doc: "Flat budget from the FORCE_TIMEOUT_PATH instant for running sync handlers before WAIT_FOR_THREAD is logged (the drain keeps waiting); `null` = `jobTimeout`.",
  }),
  /**
   * `SONIQ_METRICS_INTERVAL`. How often the maintenance leader samples per-queue counts and the
   * oldest claimable job's age (`queue_metrics`, Prometheus `soniq_queue_*`); only while something
   * listens. Accepts 1–3600 seconds. Default 15.
   */
  metricsInterval: setting({
    type: seconds(1, 3600),
    default: 15,
    unit: "seconds",
    doc: "How often the maintenance leader samples per-queue counts and the oldest claimable job's age (`queue_metrics`, Prometheus `soniq_queue_*`); only while something listens.",
  }),
  /**
   * `SONIQ_TERMINATION_GRACE_SECONDS`. The supervisor's grace before SIGKILL (Kubernetes
   * `terminationGracePeriodSeconds`, systemd `TimeoutStopSec`, Compose `stop_grace_period`), when
   * the deployment tells the worker; it then warns at start if the drain budget does not fit
   * (docs/shutdown.md). Accepts 0–604800, or null seconds. Default unknown.
   */
  terminationGraceSeconds: setting({
    type: seconds(0, 7 * DAY).nullable(),
    default: null,
    defaultText: "unknown",
    unit: "seconds",
    doc: "The supervisor's grace before SIGKILL (Kubernetes `terminationGracePeriodSeconds`, systemd `TimeoutStopSec`, Compose `stop_grace_period`), when the deployment tells the worker; it then warns at start if the drain budget does not fit (docs/shutdown.md).",
  }),
  /**
   * `SONIQ_PRE_STOP_SECONDS`. Time a preStop hook spends before SIGTERM reaches the worker; counts
   * against `terminationGraceSeconds`. Accepts 0–86400 seconds. Default 0.
   */
  preStopSeconds: setting({
    type: seconds(0, DAY),
    default: 0,
    unit: "seconds",
    doc: "Time a preStop hook spends before SIGTERM reaches the worker; counts against `terminationGraceSeconds`.",
  }),
};

type Settings = typeof SETTINGS;
/** The name of one setting. */
export type SettingKey = keyof Settings;
type SettingType<K extends SettingKey> = Settings[K]["type"];

/** The schema's shape: each declared type with its declared default. */
type SettingsShape = { [K in SettingKey]: z.ZodDefault<SettingType<K>> };

/** The keys of {@link SoniqSettings}, in declaration order (for docs and `--help`). */
export const SETTING_KEYS: readonly SettingKey[] = Object.keys(SETTINGS) as SettingKey[];

/** The settings schema (zod), built from {@link SETTINGS}; see there for each field's meaning. */
export const settingsSchema = z.strictObject(
  Object.fromEntries(
    SETTING_KEYS.map((key) => {
      const { type, default: value } = SETTINGS[key] as SettingDeclaration;
      return [key, type.default(value)];
    }),
  ) as SettingsShape,
);

/** Resolved settings (every field present; durations in seconds). */
export type SoniqSettings = z.output<typeof settingsSchema>;

/**
 * Options accepted by `new Soniq(options)`, one per entry of {@link SETTINGS} (whose comments
 * editors show here). Each may also come from its `SONIQ_*` variable (`SONIQ_` + the name in
 * SCREAMING_SNAKE_CASE).
 */
export type SoniqSettingsInput = { [K in keyof Settings]?: z.input<Settings[K]["type"]> };
