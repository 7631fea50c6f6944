// After tsc: make the CLI executable so `node_modules/.bin/soniq` runs it directly. (Migrations
// need no copying: scripts/embed-migrations.ts compiles their text into the JavaScript.)
import { chmodSync } from "node:fs";
import { join } from "node:path";

chmodSync(join("dist", "cli", "main.js"), 0o755);
