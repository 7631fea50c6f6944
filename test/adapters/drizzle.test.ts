// soniq/drizzle against drizzle-orm's node-postgres driver (answers `{ rows }`) and its
// postgres.js driver (answers the rows), on PostgreSQL: test/helpers/transactional-adapter-cases.ts.
import { drizzle as drizzleNodePg } from "drizzle-orm/node-postgres";
import { drizzle as drizzlePostgresJs } from "drizzle-orm/postgres-js";
import pg from "pg";
import postgres from "postgres";
import { fromDrizzle } from "../../src/adapters/drizzle.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres } from "../helpers/postgres-suite.js";
import { transactionalAdapterCases } from "../helpers/transactional-adapter-cases.js";

describePostgres("soniq/drizzle (node-postgres): transactional enqueue", () => {
  transactionalAdapterCases(async () => {
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
    const db = drizzleNodePg({ client: pool });
    return {
      transaction: (work) => db.transaction((tx) => work(fromDrizzle(tx))),
      close: () => pool.end(),
    };
  });
});

describePostgres("soniq/drizzle (postgres.js): transactional enqueue", () => {
  transactionalAdapterCases(async () => {
    const client = postgres(TEST_DATABASE_URL, { max: 2, onnotice: () => {} });
    const db = drizzlePostgresJs({ client });
    return {
      transaction: (work) => db.transaction((tx) => work(fromDrizzle(tx))),
      close: () => client.end(),
    };
  });
});
