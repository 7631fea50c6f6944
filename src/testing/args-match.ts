/**
 * How `soniq/testing`'s assertions compare a job's stored arguments with what a test expects: a
 * partial, deep match that also accepts the asymmetric matchers of vitest and jest
 * (`expect.any(String)`, `expect.stringContaining("@")`, …).
 */

/**
 * What a test may write for a job's arguments: the same shape, any subset of its keys, at any
 * depth; leaves may be vitest / jest asymmetric matchers.
 */
export type ArgsMatch<T> = T extends readonly (infer E)[]
  ? readonly ArgsMatch<E>[] | AsymmetricMatcher
  : T extends Date
    ? Date | string | AsymmetricMatcher
    : T extends object
      ? { [K in keyof T]?: ArgsMatch<T[K]> } | AsymmetricMatcher
      : T | AsymmetricMatcher;

/** An asymmetric matcher as vitest and jest make them (`expect.any(Number)`, …). */
export interface AsymmetricMatcher {
  asymmetricMatch(other: unknown): boolean;
}

function isMatcher(value: unknown): value is AsymmetricMatcher {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { asymmetricMatch?: unknown }).asymmetricMatch === "function"
  );
}

/**
 * True when `actual` (stored arguments, parsed from JSON) matches `expected`: objects by every
 * key `expected` names (other keys of `actual` are ignored), arrays element by element with the
 * same length, a `Date` by its ISO text (JSON keeps dates as text), asymmetric matchers by their
 * own test, anything else by `Object.is`.
 */
export function matchesArgs(actual: unknown, expected: unknown): boolean {
  if (isMatcher(expected)) return expected.asymmetricMatch(actual);
  if (expected instanceof Date) return actual === expected.toISOString();
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item, i) => matchesArgs(actual[i], item))
    );
  }
  if (typeof expected === "object" && expected !== null) {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual)) return false;
    const record = actual as Record<string, unknown>;
    return Object.entries(expected).every(
      ([key, value]) => Object.hasOwn(record, key) && matchesArgs(record[key], value),
    );
  }
  return Object.is(actual, expected);
}

/** `value` as one line of JSON-like text for failure messages (matchers by their own text). */
export function describeValue(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (isMatcher(v)) {
      const own = (v as { toString?: () => string }).toString?.();
      return own && own !== "[object Object]" ? `<${own}>` : "<matcher>";
    }
    return v;
  });
  return text === undefined ? String(value) : text;
}
