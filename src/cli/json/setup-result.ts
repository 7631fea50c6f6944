/** `soniq setup --json`: the schema is ready, where (the URL with its password hidden). */
import { z } from "zod";

/** `soniq setup --json`. */
export const setupJsonSchema = z.object({
  ready: z.literal(true),
  /** The database URL, its password replaced by `***`. */
  databaseUrl: z.string(),
  /** The PostgreSQL schema; null on SQLite and memory:. */
  schema: z.string().nullable(),
});
/** `soniq setup --json` (see {@link setupJsonSchema}). */
export type SetupJson = z.infer<typeof setupJsonSchema>;
