/**
 * docs/backends.md says what the backend contract holds: its table "The contract (internal)" lists,
 * per file of src/backends/contract/, the members of the interfaces declared there (each
 * interface's own members, not inherited ones), and its "Tables" section lists every dead-letter
 * reason a worker or crash recovery writes (the `JobDeadLetteredEvent.reason` union). This test
 * reads both from the sources with the TypeScript parser and compares them with the doc.
 */
import { readFileSync } from "node:fs";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const parse = (path: string) => ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, true);

/** The member names of the interfaces `names` declared in `file` (own members only). */
function membersOf(file: string, names: readonly string[]): string[] {
  const source = parse(file);
  const found = new Set<string>();
  const members: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isInterfaceDeclaration(statement) || !names.includes(statement.name.text)) continue;
    found.add(statement.name.text);
    for (const member of statement.members) {
      if (member.name) members.push(member.name.getText(source));
    }
  }
  expect([...found].sort(), `interfaces declared in ${file}`).toEqual([...names].sort());
  return members;
}

/** The rows of backends.md's contract table: file → the names its methods cell lists. */
function docContractTable(): Map<string, string[]> {
  const text = read("docs/backends.md");
  const start = text.indexOf("## The contract (internal)");
  const body = text.slice(start, text.indexOf("\n## ", start + 1));
  const rows = new Map<string, string[]>();
  for (const line of body.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    const file = /^`([\w-]+\.ts)`$/.exec(cells[1] ?? "")?.[1];
    if (!file) continue;
    const names = [...(cells[3] ?? "").matchAll(/`([A-Za-z]+)\??[^`]*`/g)].map(
      (m) => m[1] as string,
    );
    rows.set(file, names);
  }
  return rows;
}

/** Each file of the table and the interfaces whose members its row lists. */
const INTERFACES: Record<string, readonly string[]> = {
  "job-store.ts": ["JobStore"],
  "worker-store.ts": ["WorkerStore"],
  "lease-store.ts": ["LeaseStore"],
  "notifier.ts": ["Notifier"],
  "schedule-store.ts": ["ScheduleStore"],
  "capabilities.ts": ["Capabilities"],
  "hand-off.ts": ["HandOffDesk", "HandOffTaker", "HandOffReservation"],
  "submission-store.ts": ["SubmissionStore"],
  "backend.ts": ["Backend"],
  "admin-store.ts": ["AdminStore"],
  "flow-store.ts": ["FlowStore"],
};

describe("docs/backends.md agrees with src/backends/contract/", () => {
  it("contract table › each file's methods cell › exactly the members of its interfaces", () => {
    const table = docContractTable();
    expect([...table.keys()].sort()).toEqual([...Object.keys(INTERFACES), "types.ts"].sort());
    for (const [file, interfaces] of Object.entries(INTERFACES)) {
      const actual = membersOf(`src/backends/contract/${file}`, interfaces);
      expect({ file, members: [...(table.get(file) ?? [])].sort() }).toEqual({
        file,
        members: [...new Set(actual)].sort(),
      });
    }
  });

  it("tables › soniq_dead_letter_jobs › names every dead-letter reason of JobDeadLetteredEvent", () => {
    const events = parse("src/observability/events.ts");
    let reasons: string[] = [];
    events.forEachChild((node) => {
      if (!ts.isTypeAliasDeclaration(node) || node.name.text !== "JobDeadLetteredEvent") return;
      if (!ts.isTypeLiteralNode(node.type)) return;
      for (const member of node.type.members) {
        if (!ts.isPropertySignature(member) || member.name.getText(events) !== "reason") continue;
        const type = member.type;
        if (type && ts.isUnionTypeNode(type))
          reasons = type.types.map((t) => t.getText(events).replace(/"/g, ""));
      }
    });
    expect(reasons.length).toBeGreaterThan(4);
    const text = read("docs/backends.md");
    const bullet = /^- `soniq_dead_letter_jobs`:[\s\S]*?(?=\n- )/m.exec(text)?.[0] ?? "";
    const listed = new Set([...bullet.matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as string));
    expect(reasons.filter((r) => !listed.has(r))).toEqual([]);
  });
});
