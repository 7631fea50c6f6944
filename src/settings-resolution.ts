/**
 * Resolving settings: options passed in code win over `SONIQ_*` variables, which win over the
 * declared defaults (src/settings.ts). Unknown options, unknown `SONIQ_*` variables and
 * out-of-range values are errors, never ignored; so are contradictions between settings.
 */
import type { z } from "zod";
import { SoniqError } from "./errors.js";
import {
  SETTING_KEYS,
  SETTINGS,
  type SettingDeclaration,
  type SettingKey,
  type SoniqSettings,
  settingsSchema,
} from "./settings.js";

/** `databaseUrl` → `SONIQ_DATABASE_URL`. */
export function envName(key: string): string {
  return `SONIQ_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

const ENV_TO_KEY = new Map<string, SettingKey>(SETTING_KEYS.map((key) => [envName(key), key]));

/** The zod type under `.default()` / `.nullable()` wrappers ("number", "boolean", "string", …). */
export function baseType(schema: z.ZodType): string {
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
  const declaration: SettingDeclaration = SETTINGS[key];
  if (declaration.fromEnv) return declaration.fromEnv(text);
  if (text === "" && declaration.type.safeParse(null).success) return null;
  const type = baseType(declaration.type);
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
 * `SONIQ_*` variables that are not instance settings: read by one command (`soniq dashboard`'s
 * Basic-auth credentials), and so neither unknown nor settable in code.
 */
export const COMMAND_VARIABLES: ReadonlySet<string> = new Set([
  "SONIQ_DASHBOARD_USER",
  "SONIQ_DASHBOARD_PASSWORD",
]);

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
    if (!name.startsWith("SONIQ_") || raw === undefined || COMMAND_VARIABLES.has(name)) continue;
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
