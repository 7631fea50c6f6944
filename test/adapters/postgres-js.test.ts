// soniq/postgres against postgres.js (with `transform: postgres.camel`, which Soniq's statements
// must not go through) and PostgreSQL: test/helpers/transactional-adapter-cases.ts.
import postgres from "postgres";
import { fromPostgresJs } from "../../src/adapters/postgres-js.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres } from "../helpers/postgres-suite.js";
import { transactionalAdapterCases } from "../helpers/transactional-adapter-cases.js";

describePostgres("soniq/postgres (postgres.js): transactional enqueue", () => {
  transactionalAdapterCases(async () => {
    const sql = postgres(TEST_DATABASE_URL, {
      max: 2,
      transform: postgres.camel,
      onnotice: () => {},
    });
    return {
      transaction: async (work) => (await sql.begin((tx) => work(fromPostgresJs(tx)))) as never,
      close: () => sql.end(),
    };
  });
});
