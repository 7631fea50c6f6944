// A separate process for the concurrent-setup test: waits until a shared start instant so the
// processes race, then opens the SQLite file, runs setup() and prints "ok".
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";

const [path, startAt] = process.argv.slice(2);
if (!path || !startAt) throw new Error("usage: setup-process PATH START_AT_EPOCH_MS");
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAt) - Date.now())));
const backend = new SqliteBackend({ path });
await backend.setup();
await backend.close();
process.stdout.write("ok\n");
