/**
 * Text rendered from the settings declarations (src/settings.ts): the README's settings table,
 * the comment above each declaration (which editors show on `SoniqOptions`), and the defaults
 * the CLI's `--help` names. Nothing here is written by hand per setting.
 */
import type { z } from "zod";
import { SETTING_KEYS, SETTINGS, type SettingDeclaration } from "./settings.js";
import { baseType, envName } from "./settings-resolution.js";

/** A setting's key (`databaseUrl`, …). */
export type SettingName = (typeof SETTING_KEYS)[number];

const DAY = 86_400;
const MIB = 1024 * 1024;

function declarationOf(key: SettingName): SettingDeclaration {
  return SETTINGS[key];
}

/** The schema under `.nullable()` (and whether it had one). */
function unwrapNullable(schema: z.ZodType): { inner: z.ZodType; nullable: boolean } {
  const def = schema._zod.def as { type: string; innerType?: z.ZodType };
  return def.type === "nullable" && def.innerType
    ? { inner: def.innerType, nullable: true }
    : { inner: schema, nullable: false };
}

/** How the default reads in docs: `text` in backticks, numbers with a larger unit when round. */
export function defaultText(key: SettingName): string {
  const d = declarationOf(key);
  if (d.defaultText !== undefined) return d.defaultText;
  const value: unknown = d.default;
  if (typeof value === "string") return `\`${value}\``;
  if (typeof value === "number") {
    if (d.unit === "seconds" && value >= DAY && value % DAY === 0)
      return `${value} (${value / DAY} day${value === DAY ? "" : "s"})`;
    if (d.unit === "bytes" && value >= MIB && value % MIB === 0)
      return `${value} (${value / MIB} MiB)`;
  }
  return String(value);
}

/** The default as `--help` names it: `SONIQ_X or <default>` (no backticks). */
export function cliDefault(key: SettingName): string {
  return `${envName(key)} or ${defaultText(key).replaceAll("`", "")}`;
}

/** The values a setting accepts, read from its zod type: a range, a list of words, a kind. */
export function acceptedText(key: SettingName): string {
  const { inner, nullable } = unwrapNullable(declarationOf(key).type);
  const type = baseType(inner);
  let text: string;
  if (type === "number") {
    const n = inner as z.ZodNumber;
    text = `${n.isInt ? "integer " : ""}${n.minValue}–${n.maxValue}`;
  } else if (type === "enum") {
    text = (inner as z.ZodEnum).options.join(", ");
  } else if (type === "boolean") {
    text = "true, false";
  } else if (type === "array") {
    text = "list of names";
  } else {
    text = "text";
  }
  return nullable ? `${text}, or null` : text;
}

/** The comment's text above a declaration: variable, doc, unit and accepted values, default. */
export function settingSummary(key: SettingName): string {
  const d = declarationOf(key);
  const unit = d.unit ? ` ${d.unit}` : "";
  return `\`${envName(key)}\`. ${d.doc} Accepts ${acceptedText(key)}${unit}. Default ${defaultText(key)}.`;
}

/** Wraps `text` as a TSDoc comment indented by `indent` spaces, lines at most `width` long. */
export function tsdocComment(text: string, indent = 2, width = 100): string[] {
  const pad = " ".repeat(indent);
  const single = `${pad}/** ${text} */`;
  if (single.length <= width) return [single];
  const lines: string[] = [`${pad}/**`];
  let line = `${pad} *`;
  for (const word of text.split(" ")) {
    if (line.length + 1 + word.length > width && line !== `${pad} *`) {
      lines.push(line);
      line = `${pad} *`;
    }
    line += ` ${word}`;
  }
  lines.push(line, `${pad} */`);
  return lines;
}

/** The README's settings table (Markdown, columns padded), one row per declaration. */
export function settingsTable(): string {
  const header = ["option", "variable", "default", "unit", "accepts", "meaning"];
  const rows = SETTING_KEYS.map((key) => {
    const d = declarationOf(key);
    return [
      `\`${key}\``,
      `\`${envName(key)}\``,
      defaultText(key),
      d.unit ?? "",
      acceptedText(key),
      d.doc,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** Marks the generated table in README.md. */
export const TABLE_BEGIN =
  "<!-- settings table: generated from src/settings.ts by `npm run docs:settings` -->";
/** Ends the generated table in README.md. */
export const TABLE_END = "<!-- end of settings table -->";

/**
 * `readme` with the text between {@link TABLE_BEGIN} and {@link TABLE_END} replaced by
 * {@link settingsTable}.
 * @throws Error when either marker is missing.
 */
export function withSettingsTable(readme: string): string {
  const begin = readme.indexOf(TABLE_BEGIN);
  const end = readme.indexOf(TABLE_END);
  if (begin < 0 || end < begin)
    throw new Error(`README.md lacks the markers ${TABLE_BEGIN} … ${TABLE_END}`);
  return `${readme.slice(0, begin + TABLE_BEGIN.length)}\n\n${settingsTable()}\n\n${readme.slice(end)}`;
}

/**
 * `source` (src/settings.ts) with the comment above each `key: setting({` replaced by
 * {@link settingSummary} as TSDoc (added when missing).
 */
export function withSettingComments(source: string): string {
  const lines = source.split("\n");
  const out: string[] = [];
  for (const line of lines) {
    const match = /^ {2}(\w+): setting\(\{$/.exec(line);
    const key = match?.[1];
    if (key && (SETTING_KEYS as readonly string[]).includes(key)) {
      // Drop the comment already above (a contiguous `/** … */` block).
      const last = out[out.length - 1];
      if (last !== undefined && /^ {2}(\/\*\*.*\*\/| \*\/)$/.test(last)) {
        while (out.length > 0 && !/^ {2}\/\*\*/.test(out[out.length - 1] ?? "")) out.pop();
        out.pop();
      }
      out.push(...tsdocComment(settingSummary(key as SettingName)));
    }
    out.push(line);
  }
  return out.join("\n");
}
