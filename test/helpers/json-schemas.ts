/**
 * Validation against the committed JSON Schemas (docs/schemas/, draft 2020-12) with ajv and
 * ajv-formats (`date-time` checked): what a script reading `soniq … --json` would rely on.
 */
import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import { expect } from "vitest";

const ajv = new Ajv2020({ allErrors: true, strict: false });
(formats as unknown as (a: Ajv2020) => void)(ajv);

const compiled = new Map<string, ValidateFunction>();

/** The validator of docs/schemas/<name>.schema.json. */
export function validatorOf(name: string): ValidateFunction {
  let validate = compiled.get(name);
  if (!validate) {
    const schema = JSON.parse(readFileSync(`docs/schemas/${name}.schema.json`, "utf8")) as object;
    validate = ajv.compile(schema);
    compiled.set(name, validate);
  }
  return validate;
}

/** Asserts that `doc` is valid against docs/schemas/<name>.schema.json, naming every error. */
export function expectValid(name: string, doc: unknown, context = ""): void {
  const validate = validatorOf(name);
  const ok = validate(doc);
  expect(
    ok,
    `${name} ${context}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(doc).slice(0, 2000)}`,
  ).toBe(true);
}

/** Every property name of a JSON Schema, recursively (to check the key style). */
export function propertyNames(schema: unknown): string[] {
  if (Array.isArray(schema)) return schema.flatMap(propertyNames);
  if (typeof schema !== "object" || schema === null) return [];
  const names: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties" && typeof value === "object" && value !== null) {
      names.push(...Object.keys(value));
    }
    names.push(...propertyNames(value));
  }
  return names;
}
