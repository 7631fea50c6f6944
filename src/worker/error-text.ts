/** How a thrown value is stored in `last_error`: name, message and the top of the stack. */
export function errorText(error: unknown, maxLength = 4000): string {
  let text: string;
  if (error instanceof Error) {
    text = error.stack && error.stack.length > 0 ? error.stack : `${error.name}: ${error.message}`;
    if (!text.includes(error.message)) text = `${error.name}: ${error.message}\n${text}`;
    // Wrapped errors (fetch's "fetch failed", AggregateError…) hide the useful part in the cause.
    let cause: unknown = error.cause;
    for (let depth = 0; cause !== undefined && depth < 3; depth++) {
      text += `\ncaused by: ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}`;
      cause = cause instanceof Error ? cause.cause : undefined;
    }
  } else {
    let shown: string;
    try {
      shown = typeof error === "string" ? error : (JSON.stringify(error) ?? String(error));
    } catch {
      shown = String(error);
    }
    text = `non-Error thrown (${error === null ? "null" : typeof error}): ${shown}`;
  }
  // Lone surrogates and NUL would not survive every store; make the text safe everywhere.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what is removed.
  text = text.toWellFormed().replace(/\u0000/g, "\\u0000");
  return text.length > maxLength ? `${text.slice(0, maxLength)}…` : text;
}
