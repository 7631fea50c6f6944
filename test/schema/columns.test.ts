// The column catalogue (src/backends/shared/columns.ts) against the committed schema dumps: each
// engine's column lists built from it (rows.ts) name the columns of its tables, in table order
// (the positional INSERT … SELECT statements rely on that order), and the claim's hand-written
// mapper reads exactly the claimed columns of the catalogue.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type ClaimedRowFields, claimedJobOfRow } from "../../src/backends/claimed-job.js";
import { JOB_TABLE_COLUMNS } from "../../src/backends/postgres/finish-sql.js";
import * as pgRows from "../../src/backends/postgres/rows.js";
import { CLAIMED_FIELDS, JOBS } from "../../src/backends/shared/columns.js";
import * as sqliteRows from "../../src/backends/sqlite/rows.js";

/**
 * Column names per table, in order, from a dump's `CREATE TABLE` blocks. SQLite keeps columns
 * added by `ALTER TABLE … ADD COLUMN` as `\n, name TYPE, name TYPE …` before the closing
 * parenthesis, so the body is split on its top-level commas.
 */
function tableColumns(dump: string): Map<string, string[]> {
  const tables = new Map<string, string[]>();
  for (const block of dump.matchAll(/CREATE TABLE "?(\w+)"? \(\n([\s\S]*?)\n?\)(?: STRICT)?;/g)) {
    const columns = topLevelParts(block[2]!)
      .map((part) => /^\s*(\w+)\s/.exec(part)?.[1])
      .filter((name): name is string => name !== undefined && name !== "CONSTRAINT")
      .filter((name) => !/^[A-Z]+$/.test(name)); // table constraints such as `CHECK (…)`
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
    // The key and limits inside `meta`, kept in columns for the keyed indexes and the keyed claim
    // (SQLite's `concurrency_key`, migration 020, written by the inserts; PostgreSQL's three
    // generated columns, migration 034): read by the keyed claim's SQL only, last in the table,
    // no column list names them (a generated column takes no value in an INSERT). SQLite never
    // moves its column to the finished jobs; PostgreSQL's finished store has the same three,
    // always NULL, so that both tables' `SELECT *` stay alike.
    const keyColumns =
      engine === "sqlite"
        ? ["concurrency_key"]
        : ["concurrency_key", "concurrency_limit", "rate_limit"];
    expect(tables.get("soniq_jobs")?.slice(-keyColumns.length)).toEqual(keyColumns);
    const finishedKeyColumns = engine === "postgres" ? keyColumns : [];
    const withKeys = tables.get("soniq_jobs") ?? [];
    tables.set("soniq_jobs", withKeys.slice(0, -keyColumns.length));
    expect(names(rows.JOB_COLUMNS)).toEqual(tables.get("soniq_jobs"));
    // The list columns: the same, in the same order, without the result, the checkpoint and the
    // steps (each may be megabytes; no list shows them).
    const unlisted = new Set(["result", "checkpoint", "steps"]);
    expect(names(rows.JOB_LIST_COLUMNS)).toEqual(
      tables.get("soniq_jobs")?.filter((column) => !unlisted.has(column)),
    );
    expect(names(rows.DEAD_LETTER_COLUMNS)).toEqual(tables.get("soniq_dead_letter_jobs"));
    // `schema_version` is written at registration and read by the table's trigger only;
    // `job_versions` is written at registration and read by the waiting-for-worker search only
    // (its own statement, `workerCapabilities`).
    expect(names(rows.WORKER_COLUMNS)).toEqual(
      tables
        .get("soniq_workers")
        ?.filter((column) => column !== "schema_version" && column !== "job_versions"),
    );
    // A finished job is the live row moved: both tables have the same columns, in order (on
    // PostgreSQL the finished jobs are the view soniq_finished_jobs over soniq_finished_store).
    const finished = engine === "postgres" ? "soniq_finished_store" : "soniq_finished_jobs";
    expect(tables.get(finished)).toEqual([
      ...(tables.get("soniq_jobs") ?? []),
      ...finishedKeyColumns,
    ]);
    if (engine === "postgres") expect([...JOB_TABLE_COLUMNS]).toEqual(tables.get("soniq_jobs"));
  });
});

describe("the claim's mapper", () => {
  it.each([
    ["sqlite", sqliteRows],
    ["postgres", pgRows],
  ] as const)(
    "%s › claimedJobOfRow › fills each claimed field of the catalogue from its column, nothing else",
    (engine, rows) => {
      const columns = names(rows.CLAIMED_COLUMNS);
      for (const nulls of [false, true]) {
        const row: Record<string, unknown> = {};
        const expected: Record<string, unknown> = {};
        CLAIMED_FIELDS.forEach((field, i) => {
          const [, kind] = JOBS[field];
          const instant = kind.startsWith("instant");
          const value =
            nulls && kind.endsWith("?")
              ? null
              : instant
                ? 1_700_000_000_000 + i
                : kind === "number"
                  ? i
                  : `${field} value`;
          // A claim returns instants as epoch ms: PostgreSQL's numeric arrives as decimal text.
          row[columns[i]!] = instant && engine === "postgres" ? String(value) : value;
          expected[field] = instant ? new Date(value as number) : value;
        });
        expect(claimedJobOfRow(row as unknown as ClaimedRowFields)).toStrictEqual(expected);
      }
    },
  );
});

/** The comma-separated parts of a table body, commas inside parentheses left alone. */
function topLevelParts(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts.map((part) => part.replace(/--[^\n]*/g, ""));
}
