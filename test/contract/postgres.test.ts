import { describePostgres } from "../helpers/postgres-suite.js";
import { runContracts } from "./runner.js";

describePostgres("postgres", () => runContracts("PostgreSQL"));
