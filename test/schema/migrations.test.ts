// The shared migration loader: file-name rule, version clash, order, and the embedded text kept in
// step with the .sql files.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GENERATED_PATH, generatedModule } from "../../scripts/embed-migrations.js";
import {
  loadMigrations,
  MIGRATION_ENGINES,
  orderMigrations,
} from "../../src/backends/shared/migrations.js";

describe("migrations", () => {
  it("embedded module › .sql files as committed › matches them (else run `npm run build`)", () => {
    const committed = readFileSync(new URL(`../../${GENERATED_PATH}`, import.meta.url), "utf8");
    expect(
      committed === generatedModule(),
      `${GENERATED_PATH} does not match src/backends/*/migrations/*.sql: run \`npm run build\` (or \`node --import tsx scripts/embed-migrations.ts\`) and commit it`,
    ).toBe(true);
  });

  it("loadMigrations › every engine › ascending versions from 1 (gaps allowed), with their text", () => {
    for (const engine of MIGRATION_ENGINES) {
      const migrations = loadMigrations(engine);
      expect(migrations.length).toBeGreaterThan(0);
      // Increasing and unique. Versions reserved for branches not merged yet may leave gaps
      // (PostgreSQL 004–007, SQLite 003–006 while trace_context's 008/007 is in).
      const versions = migrations.map((m) => m.version);
      expect(versions).toEqual([...new Set(versions)].sort((a, b) => a - b));
      expect(versions[0]).toBe(1);
      for (const m of migrations) {
        expect(m.file).toBe(`${m.name}.sql`);
        // Schema changes, or a repair of rows an earlier version wrote (PostgreSQL 035, SQLite 022).
        expect(m.sql).toMatch(/CREATE |ALTER TABLE |UPDATE /);
      }
    }
  });

  it("orderMigrations › files out of order › sorted by version", () => {
    const ordered = orderMigrations("sqlite", [
      { file: "010_later.sql", sql: "b" },
      { file: "002_second.sql", sql: "a" },
    ]);
    expect(ordered.map((m) => [m.version, m.name])).toEqual([
      [2, "002_second"],
      [10, "010_later"],
    ]);
  });

  it("orderMigrations › two files share a version › throws naming both", () => {
    expect(() =>
      orderMigrations("postgres", [
        { file: "002_a.sql", sql: "" },
        { file: "002_b.sql", sql: "" },
      ]),
    ).toThrow(/postgres migrations 002_a\.sql and 002_b\.sql share version 2/);
  });

  it.each(["1_short.sql", "001-dash.sql", "001_Upper.sql", "001_.sql", "001_x.SQL"])(
    "orderMigrations › a file named %j › throws (not NNN_name.sql)",
    (file) => {
      expect(() => orderMigrations("sqlite", [{ file, sql: "" }])).toThrow(/not named NNN_name/);
    },
  );
});
