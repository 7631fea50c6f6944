// soniq/knex against Knex's `pg` client and PostgreSQL: test/helpers/transactional-adapter-cases.ts.
import knex from "knex";
import { fromKnex } from "../../src/adapters/knex.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres } from "../helpers/postgres-suite.js";
import { transactionalAdapterCases } from "../helpers/transactional-adapter-cases.js";

describePostgres("soniq/knex: transactional enqueue", () => {
  transactionalAdapterCases(async () => {
    const db = knex({ client: "pg", connection: TEST_DATABASE_URL, pool: { min: 0, max: 2 } });
    return {
      transaction: (work) => db.transaction((trx) => work(fromKnex(trx))),
      close: () => db.destroy(),
    };
  });
});
