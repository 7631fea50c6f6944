/**
 * Bidirectional-control characters made visible. U+202E (right-to-left override) and its kin
 * reorder the text shown after them, so an error text or an argument can make a terminal or a
 * page display something other than what is stored (`exe.txt` shown for `txt.exe`). The CLI's
 * output and the dashboard page show each as its escape, `\u202E`: in JSON text that escape is
 * the same value, in plain text it is a visible marker.
 */

/**
 * The bidirectional controls: U+061C (Arabic letter mark), U+200E/U+200F (LRM, RLM),
 * U+202A–U+202E (embeddings and overrides), U+2066–U+2069 (isolates).
 */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/**
 * `text` with every bidirectional-control character replaced by its six-character escape
 * (`\u202E`); other text unchanged. Applied to JSON text it keeps the JSON's value.
 */
export function visibleText(text: string): string {
  return text.replace(
    BIDI_CONTROLS,
    (c) => `\\u${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`,
  );
}
