/**
 * Values as the page receives them: redacted, serialised as JSON text, and truncated server-side
 * above `maxPreviewBytes` (UTF-8 bytes) with the full size stated, so a 20 MB result never reaches
 * the browser. The page renders the text as text; the full value is a separate download.
 */

/** A value's preview: its JSON text (maybe cut), its full size, and whether it was cut. */
export interface Preview {
  /** Pretty JSON text, at most the preview size in UTF-8 bytes; `""` when hidden or absent. */
  json: string;
  /** The full JSON text's size in UTF-8 bytes. */
  bytes: number;
  truncated: boolean;
  /** Left out on purpose (`hideArgs`): ask for the download. */
  hidden: boolean;
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function cutUtf8(
  text: string,
  maxBytes: number,
): { text: string; bytes: number; cut: boolean } {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return { text, bytes, cut: false };
  // A cheap upper bound first (a code unit is at least one byte), then exact.
  let cutText = Buffer.from(text.slice(0, maxBytes), "utf8").subarray(0, maxBytes).toString("utf8");
  cutText = cutText.replace(/\uFFFD$/, "");
  return { text: cutText, bytes, cut: true };
}

/** JSON text of a value (pretty when small), or `null` for undefined. */
export function jsonText(value: unknown, pretty: boolean): string {
  return JSON.stringify(value === undefined ? null : value, null, pretty ? 2 : 0) ?? "null";
}

/** The preview of `value` at most `maxBytes` long; `hidden` leaves the text out. */
export function preview(value: unknown, maxBytes: number, hidden = false): Preview {
  const full = jsonText(value, true);
  const { text, bytes, cut } = cutUtf8(full, maxBytes);
  return { json: hidden ? "" : text, bytes, truncated: cut, hidden };
}

/** A text field (an error message) cut to `maxBytes`, with a marker when cut. */
export function previewText(text: string | null, maxBytes: number): string | null {
  if (text === null) return null;
  const { text: cut, bytes, cut: wasCut } = cutUtf8(text, maxBytes);
  return wasCut ? `${cut}… [${bytes} bytes; truncated]` : cut;
}
