import { join } from "node:path";
import type { Backend } from "../../src/backends/contract/index.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";
import { runBackendContract } from "./runner.js";

runBackendContract({
  label: "sqlite",
  async make() {
    const backend = new SqliteBackend({ path: join(tempDir("soniq-sqlite-"), "soniq.db") });
    await backend.setup();
    return backend;
  },
  share(backend: Backend) {
    if (!(backend instanceof SqliteBackend)) throw new Error("not a SqliteBackend");
    // The schema is a PostgreSQL notion; SQLite ignores it.
    return { databaseUrl: `sqlite:${backend.path}`, schema: "public" };
  },
  async cleanup() {
    removeTempDirs();
  },
});
