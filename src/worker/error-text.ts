/**
 * How a thrown value is stored in `last_error`: name, message, the top of the stack and the
 * cause chain. Total: it never throws, whatever was thrown (null-prototype objects, revoked
 * proxies, getters that throw, BigInts…), so an outcome can always be written.
 */

/** `String(value)` that cannot throw. */
function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    try {
      return Object.prototype.toString.call(value);
    } catch {
      return "[unprintable value]";
    }
  }
}

/** Reads a property that may be a throwing getter (or sit on a revoked proxy). */
function safeGet(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function describeError(error: Error): string {
  const name = safeString(safeGet(error, "name") ?? "Error");
  const message = safeString(safeGet(error, "message") ?? "");
  const stack = safeGet(error, "stack");
  let text = typeof stack === "string" && stack.length > 0 ? stack : `${name}: ${message}`;
  if (!text.includes(message)) text = `${name}: ${message}\n${text}`;
  // Wrapped errors (fetch's "fetch failed", AggregateError…) hide the useful part in the cause.
  let cause: unknown = safeGet(error, "cause");
  for (let depth = 0; cause !== undefined && depth < 3; depth++) {
    const shown =
      cause instanceof Error
        ? `${safeString(safeGet(cause, "name"))}: ${safeString(safeGet(cause, "message"))}`
        : safeString(cause);
    text += `\ncaused by: ${shown}`;
    cause = cause instanceof Error ? safeGet(cause, "cause") : undefined;
  }
  return text;
}

function describeOther(error: unknown): string {
  let shown: string;
  if (typeof error === "string") shown = error;
  else {
    try {
      shown = JSON.stringify(error) ?? safeString(error);
    } catch {
      shown = safeString(error);
    }
  }
  return `non-Error thrown (${error === null ? "null" : typeof error}): ${shown}`;
}

/**
 * The text stored in `last_error` for a thrown value, at most `maxLength` characters (plus "…").
 * NUL characters are escaped and lone surrogates replaced, so every backend stores it as is.
 */
export function errorText(error: unknown, maxLength = 4000): string {
  let text: string;
  try {
    let isError = false;
    try {
      isError = error instanceof Error;
    } catch {
      isError = false; // a revoked proxy throws even on instanceof
    }
    // Error-like objects from another realm (a DOMException such as DataCloneError from a
    // thread, an Error from a vm context) fail `instanceof Error` but carry name and message.
    if (!isError && typeof error === "object" && error !== null) {
      isError =
        typeof safeGet(error, "name") === "string" && typeof safeGet(error, "message") === "string";
    }
    text = isError ? describeError(error as Error) : describeOther(error);
  } catch {
    text = "[an unprintable value was thrown]";
  }
  if (text.length > maxLength) text = `${text.slice(0, maxLength)}…`;
  // Lone surrogates (also from cutting a pair above) and NUL would not survive every store.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what is replaced.
  return text.toWellFormed().replace(/\u0000/g, "\\u0000");
}
