/**
 * The text of docs/schemas/: one JSON Schema (draft 2020-12) file per entry of
 * {@link JSON_OUTPUTS}, generated from its zod schema, plus a README listing them.
 * scripts/json-schemas.ts writes them (`npm run docs:json-schemas`); a test checks that the
 * committed files equal this.
 */
import { JSON_OUTPUTS, jsonSchemaOf } from "./outputs.js";

/** The directory the files live in, relative to the repository. */
export const SCHEMA_DIR = "docs/schemas";

/** Every file of {@link SCHEMA_DIR}: its name (no directory) and its text. */
export function schemaFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const rows: string[] = [];
  for (const [name, output] of Object.entries(JSON_OUTPUTS)) {
    const file = `${name}.schema.json`;
    files.set(file, `${JSON.stringify(jsonSchemaOf(name, output), null, 2)}\n`);
    rows.push(`- [\`${file}\`](${file}): ${output.commands.map((c) => `\`${c}\``).join(", ")}`);
  }
  files.set(
    "README.md",
    [
      "# JSON Schemas of `soniq … --json`",
      "",
      "Generated from the zod schemas in `src/admin/json/` and `src/cli/json/` by",
      "`npm run docs:json-schemas`; do not edit by hand. Keys are camelCase (docs/operations.md,",
      '"JSON output"). The dashboard\'s HTTP API is described by `docs/dashboard.openapi.json`.',
      "",
      ...rows,
      "",
    ].join("\n"),
  );
  return files;
}
