/**
 * A failure as JSON — the one shape every `soniq … --json` prints on an error (on standard
 * output, exit code 2) and every dashboard HTTP API error answers with (its status 4xx/5xx).
 */
import { z } from "zod";

/** `{"error":{"code":…,"message":…}}`. */
export const errorJsonSchema = z.object({
  error: z.object({
    /**
     * A Soniq error code (`INVALID_INPUT`, `NOT_FOUND`, `DATABASE_UNREACHABLE`, …; errors.ts), or
     * one of the dashboard's own (`BAD_REQUEST`, `UNAUTHENTICATED`, `FORBIDDEN`, …).
     */
    code: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
    /** What went wrong, for a person (without the code). */
    message: z.string(),
  }),
});
/** A failure as JSON (see {@link errorJsonSchema}). */
export type ErrorJson = z.infer<typeof errorJsonSchema>;

/** A failure as JSON. */
export function errorJson(code: string, message: string): ErrorJson {
  return { error: { code, message } };
}
