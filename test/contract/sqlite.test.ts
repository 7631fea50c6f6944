import { runContracts } from "./runner.js";

runContracts("SQLite file");
