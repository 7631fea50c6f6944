/**
 * A one-dimensional JavaScript array as PostgreSQL array-literal text (`{"a",NULL,"b\"c"}`), for
 * the adapters whose drivers do not all send arrays as parameters (Drizzle's postgres.js driver
 * types every parameter as text): the statement's cast (`$1::uuid[]`, `$5::int[]`) reads it.
 */

/** One element: NULL, a number or boolean as it is, anything else a double-quoted string. */
function element(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? "t" : "f";
  if (Array.isArray(value) || typeof value === "object") {
    throw new TypeError("arrayLiteral: only one-dimensional arrays of scalars");
  }
  return `"${String(value).replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The array-literal text of `values`.
 * @throws TypeError for nested arrays or objects (Soniq's statements never send them).
 */
export function arrayLiteral(values: readonly unknown[]): string {
  return `{${values.map(element).join(",")}}`;
}
