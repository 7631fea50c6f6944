/**
 * `valueText`: any value as short text for an error message, without ever throwing. `String(x)`
 * throws a `TypeError` for a symbol or an object without a prototype (`Object.create(null)`, what
 * `JSON.parse` of `{"__proto__": null}` can yield), which would replace the coded error being
 * built with a raw one.
 */
import { inspect } from "node:util";

/**
 * `value` as text for a message: strings and numbers as `String` gives them, anything else as
 * `util.inspect` shows it (one line, at most 200 characters).
 */
export function valueText(value: unknown): string {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
    return String(value);
  }
  const text = inspect(value, { depth: 2, breakLength: Number.POSITIVE_INFINITY });
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
