// Transactional enqueue through the public API, exactly as the README shows it: with a `pg`
// client and with Kysely (`soniq/kysely`). The job exists if and only if the caller commits.
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { pino } from "pino";
import { afterAll, expect, it } from "vitest";
import { fromKysely } from "../../src/adapters/kysely.js";
import { Soniq } from "../../src/index.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("transactional enqueue through Soniq (pg and Kysely)", () => {
  const schema = usePostgresSchemas("soniq_tx").next();
  const soniq = new Soniq({
    databaseUrl: TEST_DATABASE_URL,
    schema,
    env: {},
    logger: pino({ level: "silent" }),
  });
  const welcome = soniq.job({
    name: "user.welcome",
    handler: async (args: { email: string }) => args.email,
  });
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  const db = new Kysely<{ tx_users: { email: string } }>({
    dialect: new PostgresDialect({ pool }),
  });

  afterAll(async () => {
    await soniq.close();
    await db.destroy();
  });

  it("pg client: commit keeps the job, rollback drops it", async () => {
    await soniq.setup();
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const rolledBack = await welcome.enqueue(
        { email: "gone@example.com" },
        { connection: client },
      );
      expect(await soniq.getJob(rolledBack)).toBeNull(); // not visible before commit
      await client.query("ROLLBACK");
      await client.query("BEGIN");
      const committed = await welcome.enqueue(
        { email: "kept@example.com" },
        { connection: client },
      );
      await client.query("COMMIT");
      expect(await soniq.getJob(rolledBack)).toBeNull();
      expect(await soniq.getJob(committed)).toMatchObject({
        status: "queued",
        args: { email: "kept@example.com" },
      });
    } finally {
      client.release();
    }
  });

  it("Kysely transaction: the job shares the transaction's fate", async () => {
    await soniq.setup();
    await db
      .withSchema(schema)
      .schema.createTable("tx_users")
      .ifNotExists()
      .addColumn("email", "text")
      .execute();
    const enqueueIn = (trx: Kysely<{ tx_users: { email: string } }>, email: string) =>
      welcome.enqueue({ email }, { connection: fromKysely(trx) });
    let committedId = "";
    await db.transaction().execute(async (trx) => {
      await trx
        .withSchema(schema)
        .insertInto("tx_users")
        .values({ email: "k@example.com" })
        .execute();
      committedId = await enqueueIn(trx, "k@example.com");
    });
    let failedId = "";
    await expect(
      db.transaction().execute(async (trx) => {
        await trx
          .withSchema(schema)
          .insertInto("tx_users")
          .values({ email: "x@example.com" })
          .execute();
        failedId = await enqueueIn(trx, "x@example.com");
        throw new Error("business rule failed");
      }),
    ).rejects.toThrow("business rule failed");
    expect(await soniq.getJob(committedId)).toMatchObject({ status: "queued" });
    expect(failedId).not.toBe("");
    expect(await soniq.getJob(failedId)).toBeNull();
    await db.withSchema(schema).schema.dropTable("tx_users").execute();
  });
});
