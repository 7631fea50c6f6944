// The backend contract through a real PgBouncer in transaction mode (test/helpers/pgbouncer.ts):
// the pool goes through the pooler with `pooler: "transaction"`, LISTEN straight to PostgreSQL
// (`listenUrl`). docs/backends.md, "PostgreSQL connections".
import { afterAll, beforeAll } from "vitest";
import { describePgBouncer, type PgBouncer, startPgBouncer } from "../helpers/pgbouncer.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { runContracts } from "./runner.js";

describePgBouncer("postgres through pgbouncer (transaction mode)", () => {
  let bouncer: PgBouncer | undefined;
  beforeAll(async () => {
    bouncer = await startPgBouncer();
  });
  afterAll(async () => {
    await bouncer?.stop();
  });
  runContracts("PostgreSQL", {
    label: "PostgreSQL through PgBouncer",
    pooler: () => {
      if (!bouncer) throw new Error("pgbouncer is not running");
      return { url: bouncer.url, listenUrl: TEST_DATABASE_URL };
    },
  });
});
