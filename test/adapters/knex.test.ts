// soniq/knex against Knex's `pg` client (with a `postProcessResponse` that camel-cases columns
// except for Soniq's statements, as docs/transactions.md says) and PostgreSQL:
// test/helpers/transactional-adapter-cases.ts.
import knex from "knex";
import { fromKnex } from "../../src/adapters/knex.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres } from "../helpers/postgres-suite.js";
import { transactionalAdapterCases } from "../helpers/transactional-adapter-cases.js";

describePostgres("soniq/knex: transactional enqueue", () => {
  transactionalAdapterCases(async () => {
    const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    const db = knex({
      client: "pg",
      connection: TEST_DATABASE_URL,
      pool: { min: 0, max: 2 },
      postProcessResponse: (
        result: { rows?: Record<string, unknown>[] },
        context?: { soniq?: boolean },
      ) => {
        if (context?.soniq || !Array.isArray(result?.rows)) return result;
        const rows = result.rows.map((row) =>
          Object.fromEntries(Object.entries(row).map(([k, v]) => [camel(k), v])),
        );
        return { ...result, rows };
      },
    });
    return {
      transaction: (work) => db.transaction((trx) => work(fromKnex(trx))),
      close: () => db.destroy(),
    };
  });
});
