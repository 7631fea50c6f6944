/**
 * The text derived from the settings declarations stays in step with them: the README's settings
 * table, the comment above each declaration, the schema's defaults and the CLI's defaults.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SETTING_KEYS, SETTINGS, settingsSchema } from "../../src/settings.js";
import {
  acceptedText,
  cliDefault,
  defaultText,
  settingsTable,
  withSettingComments,
  withSettingsTable,
} from "../../src/settings-docs.js";
import { resolveSettings } from "../../src/settings-resolution.js";

const FIX = "run `npm run docs:settings` and commit the result";

describe("settings docs", () => {
  it("README › settings table › equals the one generated from src/settings.ts", () => {
    const readme = readFileSync("README.md", "utf8");
    expect(
      withSettingsTable(readme) === readme,
      `README.md's settings table is stale: ${FIX}`,
    ).toBe(true);
  });

  it("src/settings.ts › comment above each declaration › equals the generated one", () => {
    const source = readFileSync("src/settings.ts", "utf8");
    expect(
      withSettingComments(source) === source,
      `a setting's comment in src/settings.ts is stale: ${FIX}`,
    ).toBe(true);
  });

  it("declarations › resolved with no input › every default is the declared one", () => {
    const resolved = resolveSettings({}, {});
    for (const key of SETTING_KEYS) expect(resolved[key], key).toEqual(SETTINGS[key].default);
    expect(Object.keys(settingsSchema.shape)).toEqual([...SETTING_KEYS]);
  });

  it("table › one row per setting › names its variable, default and accepted range", () => {
    const table = settingsTable();
    expect(table.split("\n")).toHaveLength(SETTING_KEYS.length + 2);
    expect(table).toContain("| `SONIQ_CONCURRENCY` ");
    expect(defaultText("resultRetention")).toBe("604800 (7 days)");
    expect(defaultText("maxPayloadBytes")).toBe("1048576 (1 MiB)");
    expect(defaultText("databaseUrl")).toBe("`sqlite:./soniq.db`");
    expect(acceptedText("concurrency")).toBe("integer 1–10000");
    expect(acceptedText("syncHandlerGraceSeconds")).toBe("0–604800, or null");
    expect(acceptedText("logLevel")).toBe("fatal, error, warn, info, debug, trace, silent");
    expect(cliDefault("shutdownTimeout")).toBe("SONIQ_SHUTDOWN_TIMEOUT or 30");
  });

  it("withSettingsTable › README without the markers › throws naming them", () => {
    expect(() => withSettingsTable("# no table here\n")).toThrow(/settings table/);
  });
});
