// Each engine's declared column lists (rows.ts) name the columns of its tables, in table order, as
// the committed schema dumps show them: the row types, mappers and positional INSERT … SELECT
// statements rely on that order.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as pgRows from "../../src/backends/postgres/rows.js";
import * as sqliteRows from "../../src/backends/sqlite/rows.js";

/**
 * Column names per table, in order, from a dump's `CREATE TABLE` blocks. SQLite keeps a column
 * added by `ALTER TABLE … ADD COLUMN` as `\n, name TYPE` before the closing parenthesis.
 */
function tableColumns(dump: string): Map<string, string[]> {
  const tables = new Map<string, string[]>();
  for (const block of dump.matchAll(/CREATE TABLE (\w+) \(\n([\s\S]*?)\n?\)(?: STRICT)?;/g)) {
    // SQLite keeps an `ALTER TABLE … ADD COLUMN` as `, name TYPE …` appended to the table's text,
    // possibly several on one line.
    const columns = block[2]!
      .replace(/\n, /g, ",\n  ")
      .replace(/,\s+(?=[a-z_]+ [A-Z]+)/g, ",\n")
      .split("\n")
      .map((line) => line.replace(/^,\s*/, ""))
      .map((line) => /^\s*(\w+)\s/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined && name !== "CONSTRAINT")
      .filter((name) => !/^[A-Z]+$/.test(name)); // continuation lines such as `CHECK (…)`
    tables.set(block[1]!, columns);
  }
  return tables;
}

/** The output names of a select list (`a::text AS a, b` → `a`, `b`). */
function names(list: string): string[] {
  return list.split(",").map((item) => item.trim().split(/\s+/).at(-1)!);
}

const dump = (engine: string) =>
  tableColumns(readFileSync(new URL(`./${engine}.sql`, import.meta.url), "utf8"));

describe("column lists", () => {
  it.each([
    ["sqlite", sqliteRows],
    ["postgres", pgRows],
  ] as const)("%s › rows.ts lists › match the dumped tables in order", (engine, rows) => {
    const tables = dump(engine);
    expect(names(rows.JOB_COLUMNS)).toEqual(tables.get("soniq_jobs"));
    expect(names(rows.DEAD_LETTER_COLUMNS)).toEqual(tables.get("soniq_dead_letter_jobs"));
    expect(names(rows.WORKER_COLUMNS)).toEqual(tables.get("soniq_workers"));
  });
});
