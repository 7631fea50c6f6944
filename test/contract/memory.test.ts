import { MemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { type ContractTarget, runBackendContract } from "./runner.js";
import { runSubmissionContract } from "./submission-contract.js";

const target: ContractTarget = {
  label: "memory",
  async make() {
    const backend = new MemoryBackend();
    await backend.setup();
    return backend;
  },
};
runBackendContract(target);
runSubmissionContract(target);
