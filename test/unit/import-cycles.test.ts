// Guards the layering of src/: no module imports itself through a chain of imports (type-only
// imports included, so a type cannot smuggle a cycle back in).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

/** Relative imports of `file` (static `import`/`export … from`), resolved to .ts paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const match of text.matchAll(/(?:import|export)\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']/g)) {
    const spec = match[1] as string;
    found.push(resolve(dirname(file), spec.replace(/\.js$/, ".ts")));
  }
  return found;
}

/** Every cycle found by a depth-first walk, each as a list of paths relative to src/. */
function findCycles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [f, importsOf(f)]));
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === "open") {
        cycles.push(stack.slice(stack.indexOf(next)).map((f) => relative(SRC, f)));
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

describe("src/ imports", () => {
  it("import graph › every module under src/ › has no cycle", () => {
    expect(findCycles(sources(SRC))).toEqual([]);
  });
});
