import type { Backend } from "../../src/backends/contract/index.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";
import { runBackendContract } from "./runner.js";

describePostgres("postgres", () => {
  const schemas = usePostgresSchemas();
  const schemaOf = new WeakMap<Backend, string>();
  runBackendContract({
    label: "postgres",
    async make() {
      const schema = schemas.next();
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
  });
});
