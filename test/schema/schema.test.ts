// The committed schema dumps (test/schema/*.sql) match what a fresh setup() creates, so a migration
// under review shows its effect on the schema as a diff of these files.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DUMP_PATHS, freshPostgresDump, freshSqliteDump } from "../../scripts/schema-dump.js";
import { postgresAvailable, TEST_DATABASE_URL } from "../helpers/postgres.js";

const available = await postgresAvailable();

function committed(engine: keyof typeof DUMP_PATHS): string {
  return readFileSync(new URL(`../../${DUMP_PATHS[engine]}`, import.meta.url), "utf8");
}

function stale(engine: keyof typeof DUMP_PATHS): string {
  return `${DUMP_PATHS[engine]} differs from the schema a fresh setup() creates: run \`npm run schema:dump\`, review the diff and commit it`;
}

describe("schema dump", () => {
  it("sqlite › fresh setup › matches test/schema/sqlite.sql", async () => {
    expect(await freshSqliteDump(), stale("sqlite")).toBe(committed("sqlite"));
  });

  it.skipIf(!available)("postgres › fresh setup › matches test/schema/postgres.sql", async () => {
    expect(await freshPostgresDump(TEST_DATABASE_URL), stale("postgres")).toBe(
      committed("postgres"),
    );
  });
});
