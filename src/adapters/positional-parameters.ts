/**
 * Splits a PostgreSQL statement at its positional parameters (`$1`, `$2`, …), for the adapters
 * whose libraries number parameters themselves (Drizzle's `sql` chunks, Knex's `?`): what lies
 * in string literals, quoted identifiers, dollar-quoted strings and comments is never a
 * parameter and is kept as it is.
 */

/** A statement cut at its parameters: `text[0] $a text[1] $b text[2] …`. */
export interface SplitStatement {
  /** The text around the parameters; always one more than `parameters`. */
  readonly text: readonly string[];
  /** The 1-based number of each parameter, in order of appearance (a number may repeat). */
  readonly parameters: readonly number[];
}

const IDENTIFIER_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/;
const DOLLAR_TAG = /^\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/;

/** Index just past the quoted run that opens at `start` with `quote` (`''`/`""` doubled inside). */
function skipQuoted(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i];
    if (backslashEscapes && c === "\\") i += 2;
    else if (c === quote && sql[i + 1] === quote) i += 2;
    else if (c === quote) return i + 1;
    else i += 1;
  }
  return sql.length;
}

/** Index just past the block comment that opens at `start` (PostgreSQL nests them). */
function skipBlockComment(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql.startsWith("/*", i)) {
      depth += 1;
      i += 2;
    } else if (sql.startsWith("*/", i)) {
      depth -= 1;
      i += 2;
      if (depth === 0) return i;
    } else i += 1;
  }
  return sql.length;
}

/**
 * Cuts `sql` at its positional parameters. A `$` directly after an identifier character (as in
 * `a$1`) is part of that identifier, not a parameter.
 */
export function splitPositionalParameters(sql: string): SplitStatement {
  const text: string[] = [];
  const parameters: number[] = [];
  let pieceStart = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    const previous = i > 0 ? (sql[i - 1] as string) : "";
    if (c === "'") {
      const escaped =
        (previous === "E" || previous === "e") && !IDENTIFIER_CHAR.test(sql[i - 2] ?? "");
      i = skipQuoted(sql, i, "'", escaped);
    } else if (c === '"') {
      i = skipQuoted(sql, i, '"', false);
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end + 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      i = skipBlockComment(sql, i);
    } else if (c === "$" && !IDENTIFIER_CHAR.test(previous)) {
      const digits = /^\$(\d+)/.exec(sql.slice(i, i + 12));
      const tag = digits ? null : DOLLAR_TAG.exec(sql.slice(i, i + 200));
      if (digits) {
        text.push(sql.slice(pieceStart, i));
        parameters.push(Number(digits[1]));
        i += digits[0].length;
        pieceStart = i;
      } else if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        i = close === -1 ? sql.length : close + tag[0].length;
      } else i += 1;
    } else i += 1;
  }
  text.push(sql.slice(pieceStart));
  return { text, parameters };
}
