/**
 * docs/metrics.md's table of metrics is an API: this test parses the table and compares it with
 * what `prometheusMetrics` registers — the set of names, each metric's type, its label names, and
 * its units (time is in seconds: a `_seconds` name, never `_ms`; a histogram's documented bucket
 * range is its registered first and last bucket). The label values the table lists for
 * `soniq_jobs_dead_lettered_total{reason}` and `soniq_fenced_writes_total{op}` are compared with
 * the unions of the events that feed them (`JobDeadLetteredEvent.reason`,
 * `JobFencedOutEvent.op` in src/observability/events.ts). A live worker's scrape is checked by
 * test/e2e/metrics-scrape.test.ts.
 */
import { readFileSync } from "node:fs";
import { pino } from "pino";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { prometheusMetrics } from "../../src/observability/prometheus/index.js";
import { memoryBackend } from "../helpers/test-backends.js";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

/** One row of the doc's table. */
interface DocRow {
  name: string;
  type: string;
  labels: string[];
  what: string;
}

/** The rows of the table under "## The metrics" in docs/metrics.md. */
function docTable(): DocRow[] {
  const text = read("docs/metrics.md");
  const section = text.slice(text.indexOf("## The metrics"));
  const body = section.slice(0, section.indexOf("\n## ", 1));
  const rows: DocRow[] = [];
  for (const line of body.split("\n")) {
    if (!line.startsWith("| `soniq_")) continue;
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim());
    const [name, type, labels, what] = cells as [string, string, string, string];
    rows.push({
      name: name.replace(/`/g, ""),
      type,
      labels: labels === "" || labels === "—" ? [] : labels.split(/,\s*/),
      what,
    });
  }
  return rows;
}

/** Seconds of a documented bound such as `5 ms`, `600 s`, `1 h`. */
function seconds(amount: string, unit: string): number {
  const factor: Record<string, number> = { ms: 0.001, s: 1, min: 60, h: 3600 };
  const f = factor[unit];
  if (f === undefined) throw new Error(`unknown unit ${unit}`);
  return Number(amount) * f;
}

/** What the exporter registers: name → type, label names, buckets (histograms). */
async function registered() {
  const soniq = new Soniq({
    backend: await memoryBackend(),
    env: {},
    logger: pino({ level: "silent" }),
  });
  const metrics = prometheusMetrics(soniq);
  const out = new Map<string, { type: string; labels: string[]; buckets?: number[] }>();
  for (const metric of metrics.registry.getMetricsAsArray()) {
    const m = metric as unknown as {
      name: string;
      type: string;
      labelNames: string[];
      buckets?: number[];
    };
    out.set(m.name, {
      type: m.type,
      labels: [...m.labelNames],
      ...(m.type === "histogram" && m.buckets ? { buckets: [...m.buckets] } : {}),
    });
  }
  metrics.close();
  await soniq.close();
  return out;
}

/** The string literals of property `property` of type alias `alias` in src/observability/events.ts. */
function unionOf(alias: string, property: string): string[] {
  const file = ts.createSourceFile(
    "events.ts",
    read("src/observability/events.ts"),
    ts.ScriptTarget.Latest,
  );
  for (const statement of file.statements) {
    if (!ts.isTypeAliasDeclaration(statement) || statement.name.text !== alias) continue;
    if (!ts.isTypeLiteralNode(statement.type)) break;
    for (const member of statement.type.members) {
      if (!ts.isPropertySignature(member) || member.name.getText(file) !== property) continue;
      const type = member.type;
      const parts = type && ts.isUnionTypeNode(type) ? type.types : type ? [type] : [];
      return parts.map((p) => {
        if (!ts.isLiteralTypeNode(p) || !ts.isStringLiteral(p.literal))
          throw new Error(`${alias}.${property}: not a union of string literals`);
        return p.literal.text;
      });
    }
  }
  throw new Error(`${alias}.${property} not found in src/observability/events.ts`);
}

/** The back-quoted values after the first colon of a table cell. */
function listedValues(what: string): string[] {
  const list = what.slice(what.indexOf(":") + 1);
  return [...list.matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as string);
}

describe("docs/metrics.md's table is what the exporter registers", () => {
  it("metric table › parsed and compared with the registry › same names, types, label names", async () => {
    const doc = docTable();
    const reg = await registered();
    expect(doc.length).toBeGreaterThan(10);
    expect(new Set(doc.map((r) => r.name)).size).toBe(doc.length); // no row twice
    expect(doc.map((r) => r.name).sort()).toEqual([...reg.keys()].sort());
    for (const row of doc) {
      const actual = reg.get(row.name);
      expect({ name: row.name, type: row.type, labels: [...row.labels].sort() }).toEqual({
        name: row.name,
        type: actual?.type,
        labels: [...(actual?.labels ?? [])].sort(),
      });
    }
  });

  it("metric table › units › time is in seconds, and each histogram's documented buckets are its registered range", async () => {
    const text = read("docs/metrics.md");
    expect(text).toContain("Units are seconds.");
    const reg = await registered();
    for (const row of docTable()) {
      expect(row.name, "a time unit other than seconds in a name").not.toMatch(
        /_(ms|milliseconds|minutes|hours)(_|$)/,
      );
      if (row.type === "counter") expect(row.name).toMatch(/_total$/);
      if (row.type !== "histogram") continue;
      expect(row.name).toMatch(/_seconds$/);
      const range = /buckets (\d+(?:\.\d+)?) (ms|s|min|h) … (\d+(?:\.\d+)?) (ms|s|min|h)/.exec(
        row.what,
      );
      expect(range, `${row.name}: its row states "buckets A … B"`).not.toBeNull();
      const [, lo, loUnit, hi, hiUnit] = range as unknown as [
        string,
        string,
        string,
        string,
        string,
      ];
      const buckets = reg.get(row.name)?.buckets ?? [];
      expect({ name: row.name, first: seconds(lo, loUnit), last: seconds(hi, hiUnit) }).toEqual({
        name: row.name,
        first: buckets[0],
        last: buckets[buckets.length - 1],
      });
    }
  });

  it("metric table › reason and op label values › exactly the values of the events that feed them", () => {
    const rows = new Map(docTable().map((r) => [r.name, r]));
    const reasons = listedValues(rows.get("soniq_jobs_dead_lettered_total")?.what ?? "");
    expect(reasons.sort()).toEqual(unionOf("JobDeadLetteredEvent", "reason").sort());
    const ops = listedValues(rows.get("soniq_fenced_writes_total")?.what ?? "");
    expect(ops.sort()).toEqual(unionOf("JobFencedOutEvent", "op").sort());
  });
});
