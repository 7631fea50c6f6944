// soniq/drizzle against drizzle-orm's node-postgres driver and PostgreSQL:
// test/helpers/transactional-adapter-cases.ts.
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { fromDrizzle } from "../../src/adapters/drizzle.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres } from "../helpers/postgres-suite.js";
import { transactionalAdapterCases } from "../helpers/transactional-adapter-cases.js";

describePostgres("soniq/drizzle (node-postgres): transactional enqueue", () => {
  transactionalAdapterCases(async () => {
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
    const db = drizzle({ client: pool });
    return {
      transaction: (work) => db.transaction((tx) => work(fromDrizzle(tx))),
      close: () => pool.end(),
    };
  });
});
