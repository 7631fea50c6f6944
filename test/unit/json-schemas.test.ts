/**
 * docs/schemas/ is what `npm run docs:json-schemas` generates from the zod schemas (no file stale,
 * none left over), so are the generated parts of docs/dashboard.openapi.json, every schema
 * compiles with ajv (draft 2020-12), and every key of every output is camelCase.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { JSON_OUTPUTS } from "../../src/cli/json/outputs.js";
import { SCHEMA_DIR, schemaFiles } from "../../src/cli/json/schema-files.js";
import { openApiText } from "../../src/dashboard/openapi-schemas.js";
import { propertyNames, validatorOf } from "../helpers/json-schemas.js";

describe("JSON Schemas of --json outputs", () => {
  it("docs/schemas › compared with the generator › up to date, nothing left over", () => {
    const files = schemaFiles();
    expect(readdirSync(SCHEMA_DIR).sort()).toEqual([...files.keys()].sort());
    for (const [name, text] of files) {
      expect(
        readFileSync(`${SCHEMA_DIR}/${name}`, "utf8"),
        `${name}: run npm run docs:json-schemas`,
      ).toBe(text);
    }
  });

  it("docs/dashboard.openapi.json › its generated component schemas › up to date with the zod views", () => {
    expect(
      openApiText(readFileSync("docs/dashboard.openapi.json", "utf8")),
      "run npm run docs:json-schemas",
    ).toBeNull();
  });

  it("every schema › compiled by ajv › valid, and every key camelCase", () => {
    for (const name of Object.keys(JSON_OUTPUTS)) {
      validatorOf(name);
      const schema = JSON.parse(readFileSync(`${SCHEMA_DIR}/${name}.schema.json`, "utf8"));
      for (const key of propertyNames(schema)) {
        expect(key, `${name}: ${key}`).toMatch(/^[a-z][a-zA-Z0-9]*$/);
      }
    }
  });
});
