// The published package as users get it: publint (package.json against the files) and
// @arethetypeswrong/cli (every entry point's types under each TypeScript module resolution) on an
// `npm pack` tarball. Soniq is ESM only; Node.js ^20.19 / >=22.12 (its `engines`) load it with
// `require()` too, and TypeScript >= 5.8 types that under `module: node20`/`nodenext`. attw 0.18
// analyses with TypeScript 5.6, which predates that, so its one rule about it,
// `cjs-resolves-to-esm`, is ignored; every other rule applies to every resolution (node10 through
// `typesVersions`). test/e2e/package-entry-points.test.ts loads and type-checks every entry point from
// CommonJS and ESM for real.
// Usage: node scripts/check-package.mjs [tarball]   (no tarball: packs this checkout first)
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let tarball = process.argv[2];
let packDir = null;
if (!tarball) {
  packDir = mkdtempSync(join(tmpdir(), "soniq-check-package-"));
  const out = execFileSync("npm", ["pack", "--pack-destination", packDir], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  tarball = join(packDir, out.trim().split("\n").pop());
}

const bin = (name) => join("node_modules", ".bin", name);
const checks = [
  [bin("publint"), ["run", tarball, "--strict"]],
  [bin("attw"), [tarball, "--ignore-rules", "cjs-resolves-to-esm"]],
];
let failed = false;
for (const [command, args] of checks) {
  const run = spawnSync(command, args, { stdio: "inherit" });
  if (run.status !== 0) failed = true;
}
if (packDir) rmSync(packDir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
