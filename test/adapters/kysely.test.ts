// soniq/kysely against Kysely's PostgresDialect on `pg` (with a CamelCasePlugin, which Soniq's
// statements must not go through) and PostgreSQL: test/helpers/transactional-adapter-cases.ts.
import { CamelCasePlugin, Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { fromKysely } from "../../src/adapters/kysely.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres } from "../helpers/postgres-suite.js";
import { transactionalAdapterCases } from "../helpers/transactional-adapter-cases.js";

describePostgres("soniq/kysely: transactional enqueue", () => {
  transactionalAdapterCases(async () => {
    const db = new Kysely<Record<string, never>>({
      dialect: new PostgresDialect({
        pool: new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 }),
      }),
      plugins: [new CamelCasePlugin()],
    });
    return {
      transaction: (work) => db.transaction().execute((trx) => work(fromKysely(trx))),
      close: () => db.destroy(),
    };
  });
});
