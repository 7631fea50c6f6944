// Builds the dashboard's page (src/dashboard/ui, Preact) into dist/dashboard/static/ with hashed
// names and a manifest the handler reads: one script, one stylesheet, no source maps, nothing
// fetched at run time. Part of `npm run build`.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { build } from "esbuild";

const outdir = "dist/dashboard/static";
rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
const result = await build({
  entryPoints: { app: "src/dashboard/ui/main.tsx" },
  bundle: true,
  format: "esm",
  target: ["es2022"],
  platform: "browser",
  jsx: "automatic",
  jsxImportSource: "preact",
  minify: true,
  legalComments: "none",
  entryNames: "[name]-[hash]",
  outdir,
  metafile: true,
  logLevel: "warning",
});
const files = Object.keys(result.metafile.outputs).map((path) => basename(path));
const js = files.find((f) => f.endsWith(".js"));
const css = files.find((f) => f.endsWith(".css"));
if (!js || !css)
  throw new Error(`dashboard build: expected a .js and a .css, got ${files.join(", ")}`);
writeFileSync(`${outdir}/manifest.json`, `${JSON.stringify({ js, css, files }, null, 2)}\n`);
console.log(`dashboard assets: ${files.join(", ")}`);
