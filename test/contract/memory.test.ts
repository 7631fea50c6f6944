import { MemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { runBackendContract } from "./runner.js";

runBackendContract({
  label: "memory",
  async make() {
    const backend = new MemoryBackend();
    await backend.setup();
    return backend;
  },
});
