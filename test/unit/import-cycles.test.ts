// Guards the layering of src/: no module imports itself through a chain of imports (type-only
// imports included, so a type cannot smuggle a cycle back in), and the backends layer points down:
// nothing under src/backends imports a module of the floors above it.
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

/**
 * Relative imports of `file` (static `import`/`export … from`; with `dynamic`, `import("…")` too),
 * resolved to .ts paths.
 */
function importsOf(file: string, dynamic = false): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  const pattern = dynamic
    ? /(?:(?:import|export)\s[^;]*?from\s+|import\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g
    : /(?:import|export)\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']/g;
  for (const match of text.matchAll(pattern)) {
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

/**
 * The modules outside src/backends that src/backends may import: leaves that import nothing under
 * src/ but each other.
 */
const BACKEND_LEAVES = ["errors.ts", "lifecycle/service.ts", "observability/logger.ts"];

/** Each import of a module under src/ outside src/backends by `files`, as `importer → imported`. */
function upwardImports(files: string[], allowed: readonly string[]): string[] {
  const backends = join(SRC, "backends");
  return files.flatMap((file) =>
    importsOf(file, true)
      .filter((target) => target.startsWith(SRC) && !target.startsWith(`${backends}/`))
      .map((target) => relative(SRC, target))
      .filter((target) => !allowed.includes(target))
      .map((target) => `${relative(SRC, file)} → ${target}`),
  );
}

describe("src/ imports", () => {
  it("import graph › every module under src/ › has no cycle", () => {
    expect(findCycles(sources(SRC))).toEqual([]);
  });

  it("layers › src/backends › imports nothing from the floors above it but the leaf modules", () => {
    expect(upwardImports(sources(join(SRC, "backends")), BACKEND_LEAVES)).toEqual([]);
  });

  it("layers › the leaf modules src/backends may import › import no other module under src/", () => {
    const leaves = BACKEND_LEAVES.map((leaf) => join(SRC, leaf));
    expect(upwardImports(leaves, BACKEND_LEAVES)).toEqual([]);
  });
});
