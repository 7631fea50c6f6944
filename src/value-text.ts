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

/**
 * `kind` with its indefinite article, for messages such as "a bigint is not JSON": `an` before a
 * vowel (`an Error`, `an Int8Array`), and words that take none for values that have no kind to
 * name — `undefined` is "undefined", an anonymous class's instance "an instance of an anonymous
 * class" — so no message reads "a undefined" or "a  is".
 */
export function withArticle(kind: string | undefined): string {
  if (kind === undefined || kind === "undefined") return "undefined";
  if (kind.trim() === "") return "an instance of an anonymous class";
  return /^[aeiou]/i.test(kind) ? `an ${kind}` : `a ${kind}`;
}

/** Longest input echoed whole in a message; longer input is cut by {@link echoed}. */
export const ECHO_MAX_CHARS = 200;

/**
 * User input (an id, a name, an argument) as a message echoes it: whole up to
 * {@link ECHO_MAX_CHARS} characters, else its first 60 and a note of its length
 * (`0190…… (truncated: 1048576 characters)`), so a huge argument cannot flood an error.
 */
export function echoed(input: string): string {
  if (input.length <= ECHO_MAX_CHARS) return input;
  return `${input.slice(0, 60)}… (truncated: ${input.length} characters)`;
}
