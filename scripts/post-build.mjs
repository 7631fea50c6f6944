// After tsc: copy the versioned migration files next to the compiled backends (tsc does not copy
// .sql), and make the CLI executable so `node_modules/.bin/soniq` runs it directly.
import { chmodSync, cpSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

for (const engine of ["postgres", "sqlite"]) {
  const from = join("src", "backends", engine, "migrations");
  const to = join("dist", "backends", engine, "migrations");
  mkdirSync(to, { recursive: true });
  for (const file of readdirSync(from)) {
    if (file.endsWith(".sql")) cpSync(join(from, file), join(to, file));
  }
}
chmodSync(join("dist", "cli", "main.js"), 0o755);
