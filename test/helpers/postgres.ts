import { randomBytes } from "node:crypto";
import pg from "pg";

/** The PostgreSQL server the tests use. */
export const TEST_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** When set (CI sets it), a missing PostgreSQL fails the run instead of skipping. */
export const POSTGRES_REQUIRED = process.env.TEST_REQUIRE_POSTGRES === "1";

let reachable: Promise<boolean> | undefined;

/**
 * Whether PostgreSQL answers. Prints a loud warning when it does not; throws instead when
 * `TEST_REQUIRE_POSTGRES=1`.
 */
export function postgresAvailable(): Promise<boolean> {
  reachable ??= (async () => {
    const client = new pg.Client({
      connectionString: TEST_DATABASE_URL,
      // Generous: a busy 2-core machine once took over 3 s to connect to the local server (an
      // unreachable server refuses at once; only a hung one waits this long).
      connectionTimeoutMillis: 15_000,
    });
    try {
      await client.connect();
      await client.query("select 1");
      return true;
    } catch (err) {
      if (POSTGRES_REQUIRED) {
        throw new Error(
          `TEST_REQUIRE_POSTGRES=1 but PostgreSQL at ${TEST_DATABASE_URL} is unreachable: ${String(err)}`,
        );
      }
      console.warn(
        `\n!!!!!!!!\n!!! SKIPPING PostgreSQL tests: ${TEST_DATABASE_URL} is unreachable (${String(err)}).\n!!! Set TEST_REQUIRE_POSTGRES=1 to make this a failure.\n!!!!!!!!\n`,
      );
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return reachable;
}

/** A fresh schema name, unique to this test. */
export function freshSchema(prefix = "soniq_t"): string {
  return `${prefix}_${randomBytes(6).toString("hex")}`;
}

/** Drops the given schemas (test clean-up). */
export async function dropSchemas(schemas: readonly string[]): Promise<void> {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
