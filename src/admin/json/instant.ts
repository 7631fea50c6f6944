/** The one way every JSON view writes an instant: ISO-8601 text in UTC (`…Z`). */
import { z } from "zod";

/** An instant as JSON: ISO-8601 text in UTC with a `Z`, e.g. `2026-12-06T01:40:13.000Z`. */
export const instantJsonSchema = z.iso.datetime();

/** `date` as ISO-8601 text, or null. */
export function isoOrNull(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}
