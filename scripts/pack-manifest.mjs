// `npm pack` / `npm publish` write the package.json on disk into the tarball. The checkout's
// `prepare` script (build from source on `npm install` here) means nothing to a built package, and
// npm 11 asks users to approve it: `prepack` saves package.json and removes `prepare` (and the
// pack hooks themselves); `postpack` puts the saved file back (npm runs it from the manifest it
// read before `prepack`). Usage: node scripts/pack-manifest.mjs strip|restore
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";

const SAVED = "package.json.packing";
const mode = process.argv[2];
if (mode === "strip") {
  const text = readFileSync("package.json", "utf8");
  if (!existsSync(SAVED)) writeFileSync(SAVED, text);
  const manifest = JSON.parse(text);
  delete manifest.scripts.prepare;
  delete manifest.scripts.prepack;
  delete manifest.scripts.postpack;
  writeFileSync("package.json", `${JSON.stringify(manifest, null, 2)}\n`);
} else if (mode === "restore") {
  if (existsSync(SAVED)) renameSync(SAVED, "package.json");
} else {
  process.stderr.write("usage: node scripts/pack-manifest.mjs strip|restore\n");
  process.exit(2);
}
