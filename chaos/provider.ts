/**
 * The test provider of a chaos run, as a child process of chaos/run.ts (so a harness busy reading
 * a locked SQLite file never stalls the provider's answers): test/helpers/remote-provider.ts on a
 * free port of 127.0.0.1, keeping its tasks and counters in `CHAOS_PROVIDER_STATE` (a JSON file the
 * harness reads at the end). Prints its URL on standard output; stops on SIGTERM.
 */
import { startRemoteProvider } from "../test/helpers/remote-provider.js";

const stateFile = process.env.CHAOS_PROVIDER_STATE;
if (!stateFile) throw new Error("CHAOS_PROVIDER_STATE is not set");
const provider = await startRemoteProvider({ stateFile });
process.stdout.write(`${provider.url}\n`);
process.on("SIGTERM", () => {
  void provider.close().then(() => process.exit(0));
});
