// Regenerates the text derived from the settings declarations: the README's settings table and
// the comment above each declaration in src/settings.ts. `--check` changes nothing and exits 1
// when either is out of date (test/unit/settings-docs.test.ts checks the same).
import { readFileSync, writeFileSync } from "node:fs";
import { withSettingComments, withSettingsTable } from "../src/settings-docs.js";

const files = [
  { path: "README.md", render: withSettingsTable },
  { path: "src/settings.ts", render: withSettingComments },
];
const check = process.argv.includes("--check");
let stale = 0;
for (const { path, render } of files) {
  const before = readFileSync(path, "utf8");
  const after = render(before);
  if (after === before) continue;
  stale++;
  if (check) process.stderr.write(`${path} is out of date: run npm run docs:settings\n`);
  else {
    writeFileSync(path, after);
    process.stdout.write(`rewrote ${path}\n`);
  }
}
process.exit(check && stale > 0 ? 1 : 0);
