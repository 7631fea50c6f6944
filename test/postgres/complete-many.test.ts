// PostgreSQL's batched completion answers with one row (a count, and the changed id/token pairs
// only when some row was refused): each item's answer must still be its own row's, whatever the
// case its UUIDs are written in (uuid matches in any case; the database answers in lower case).
import { afterEach, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { newJob } from "../contract/helpers.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: batched completion answers", () => {
  const schemas = usePostgresSchemas();
  const backends: PostgresBackend[] = [];

  afterEach(async () => {
    for (const b of backends.splice(0)) await b.close().catch(() => undefined);
  });

  it("an item in upper case next to a refused one › reported changed, as its row did", async () => {
    const b = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema: schemas.next(),
      poolSize: 1,
    });
    backends.push(b);
    await b.setup();
    await b.jobEnqueue({ jobs: [newJob(), newJob()] });
    const [x, y] = await b.jobClaim({ workerId: "w", queues: null, limit: 2 });
    if (!x || !y) throw new Error("nothing claimed");
    const res = await b.jobCompleteMany({
      items: [
        {
          id: x.id.toUpperCase(),
          owner: { workerId: "w", claimToken: x.claimToken.toUpperCase() },
          result: null,
        },
        { id: y.id, owner: { workerId: "w", claimToken: x.claimToken }, result: null },
      ],
      resultRetentionSeconds: 60,
    });
    expect(res).toEqual([true, false]);
    expect(await b.jobGet({ id: x.id })).toMatchObject({ status: "done" });
    expect(await b.jobGet({ id: y.id })).toMatchObject({ status: "processing" });
  });
});
