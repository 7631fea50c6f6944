/**
 * The page and its static assets, built at package build time (scripts/build-dashboard.mjs) into
 * `dist/dashboard/static/` with hashed names and a manifest. The page loads them by relative URLs
 * (it is always served at `<basePath>/`), so the base path is a runtime setting; nothing is fetched
 * from anywhere else.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { SoniqError } from "../errors.js";

/** The built files: name → bytes, plus the entry names from the manifest. */
export interface Assets {
  files: Map<string, Uint8Array>;
  js: string;
  css: string;
}

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  png: "image/png",
  svg: "image/svg+xml",
};

/** The content type of an asset by its extension. */
export function assetType(name: string): string {
  return TYPES[name.slice(name.lastIndexOf(".") + 1)] ?? "application/octet-stream";
}

/** Where the built assets are: next to the compiled module, or in `dist/` when run from source. */
function staticDir(): string {
  const candidates = [
    new URL("./static/", import.meta.url),
    new URL("../../dist/dashboard/static/", import.meta.url),
  ];
  for (const url of candidates) {
    const dir = fileURLToPath(url);
    if (existsSync(`${dir}manifest.json`)) return dir;
  }
  throw new SoniqError(
    "INVALID_OPTION",
    "the dashboard's assets are not built (run npm run build in the Soniq clone)",
  );
}

let cached: Assets | undefined;

/** Loads the built assets once (a few hundred KB, held in memory). */
export function loadAssets(): Assets {
  if (cached) return cached;
  const dir = staticDir();
  const manifest = JSON.parse(readFileSync(`${dir}manifest.json`, "utf8")) as {
    js: string;
    css: string;
    files: string[];
  };
  const files = new Map<string, Uint8Array>();
  for (const name of manifest.files) files.set(name, readFileSync(`${dir}${name}`));
  cached = { files, js: manifest.js, css: manifest.css };
  return cached;
}

/** The page: no inline script, no inline style, assets by relative URL. */
export function indexHtml(assets: Assets): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Soniq</title>
<link rel="stylesheet" href="static/${assets.css}">
<script type="module" src="static/${assets.js}"></script>
</head>
<body>
<div id="app"><noscript>The Soniq dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;
}
