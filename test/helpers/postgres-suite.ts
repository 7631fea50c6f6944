/**
 * The one PostgreSQL test header: `describePostgres` (skipped loudly when the server is
 * unreachable, a failure when `TEST_REQUIRE_POSTGRES=1`) and `usePostgresSchemas` (fresh schema
 * names, every one dropped after the block).
 */
import { afterAll, describe } from "vitest";
import { dropSchemas, freshSchema, postgresAvailable } from "./postgres.js";

/** Whether PostgreSQL answers (decided once per test file, at import). */
export const POSTGRES_UP = await postgresAvailable();

/** A describe block that runs only when PostgreSQL answers. */
export function describePostgres(name: string, fn: () => void): void {
  describe.skipIf(!POSTGRES_UP)(name, fn);
}

/** Fresh schemas for one describe block (or file): see {@link usePostgresSchemas}. */
export interface PostgresSchemas {
  /** A new schema name (not created: `setup()` creates it), dropped after the block. */
  next(): string;
  /** Drops `schema` (made elsewhere) after the block as well; returns it. */
  adopt(schema: string): string;
}

/**
 * Hands out fresh schema names and drops every one of them in `afterAll` of the enclosing block
 * (after hooks run in reverse order, so register it before the hook that closes the backends).
 * Call it inside the describe block (or at the top of a file).
 */
export function usePostgresSchemas(prefix?: string): PostgresSchemas {
  const made = new Set<string>();
  afterAll(async () => {
    if (POSTGRES_UP) await dropSchemas([...made]);
    made.clear();
  });
  return {
    next() {
      const schema = freshSchema(prefix);
      made.add(schema);
      return schema;
    },
    adopt(schema) {
      made.add(schema);
      return schema;
    },
  };
}
