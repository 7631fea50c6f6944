import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./cli.js";
import { tempDir } from "./temp.js";

/**
 * A temporary app directory whose `node_modules/soniq` links to this checkout (its built `dist/`),
 * so modules written there import "soniq" as an installed app would. Removed with the temp dirs.
 * @param files - file name → contents, written into the directory.
 * @param type - the app's package.json "type".
 */
export function linkedApp(files: Record<string, string>, type: "module" | "commonjs" = "module") {
  const dir = tempDir();
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(REPO, join(dir, "node_modules", "soniq"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", type }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}
