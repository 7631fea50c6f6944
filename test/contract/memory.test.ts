import { runContracts } from "./runner.js";

runContracts("memory");
