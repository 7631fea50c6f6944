import { describe } from "vitest";
import type { Backend } from "../../src/backends/backend.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import {
  dropSchemas,
  freshSchema,
  postgresAvailable,
  TEST_DATABASE_URL,
} from "../helpers/postgres.js";
import { type ContractTarget, runBackendContract } from "./backend-contract.js";
import { runSubmissionContract } from "./submission-contract.js";

const available = await postgresAvailable();
const schemas: string[] = [];
const schemaOf = new WeakMap<Backend, string>();

describe.skipIf(!available)("postgres", () => {
  const target: ContractTarget = {
    label: "postgres",
    async make() {
      const schema = freshSchema();
      schemas.push(schema);
      const backend = new PostgresBackend({
        connectionString: TEST_DATABASE_URL,
        schema,
        poolSize: 4,
      });
      schemaOf.set(backend, schema);
      await backend.setup();
      return backend;
    },
    share(backend) {
      const schema = schemaOf.get(backend);
      if (!schema) throw new Error("not a backend made by this target");
      return { databaseUrl: TEST_DATABASE_URL, schema };
    },
    async cleanup() {
      await dropSchemas(schemas.splice(0));
    },
  };
  runBackendContract(target);
  runSubmissionContract(target);
});
