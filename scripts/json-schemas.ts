// Regenerates docs/schemas/ (one JSON Schema per `--json` output) from the zod schemas
// (src/cli/json/outputs.ts), deleting files no output has any more, and the generated parts of
// docs/dashboard.openapi.json (src/dashboard/openapi-schemas.ts). `--check` changes nothing
// and exits 1 when a file is out of date (test/unit/json-schemas.test.ts checks the same).

import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SCHEMA_DIR, schemaFiles } from "../src/cli/json/schema-files.js";
import { openApiText } from "../src/dashboard/openapi-schemas.js";

const OPENAPI = "docs/dashboard.openapi.json";

const check = process.argv.includes("--check");
const files = schemaFiles();
mkdirSync(SCHEMA_DIR, { recursive: true });
let stale = 0;
for (const existing of readdirSync(SCHEMA_DIR)) {
  if (files.has(existing)) continue;
  stale++;
  if (check) process.stderr.write(`${join(SCHEMA_DIR, existing)} is no output's schema\n`);
  else unlinkSync(join(SCHEMA_DIR, existing));
}
for (const [name, text] of files) {
  const path = join(SCHEMA_DIR, name);
  let before: string | null = null;
  try {
    before = readFileSync(path, "utf8");
  } catch {
    before = null;
  }
  if (before === text) continue;
  stale++;
  if (check) process.stderr.write(`${path} is out of date: run npm run docs:json-schemas\n`);
  else {
    writeFileSync(path, text);
    process.stdout.write(`wrote ${path}\n`);
  }
}
const openApi = openApiText(readFileSync(OPENAPI, "utf8"));
if (openApi !== null) {
  stale++;
  if (check) process.stderr.write(`${OPENAPI} is out of date: run npm run docs:json-schemas\n`);
  else {
    writeFileSync(OPENAPI, openApi);
    // The repository's formatting (biome collapses short arrays).
    execFileSync("npx", ["biome", "format", "--write", OPENAPI], { stdio: "ignore" });
    process.stdout.write(`wrote ${OPENAPI}\n`);
  }
}
process.exit(check && stale > 0 ? 1 : 0);
