// After close(), every call rejects at once with CLOSED — never a pool time-out.
import { expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { isSoniqError } from "../../src/errors.js";
import { newJob } from "../contract/helpers.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: close", () => {
  const schemas = usePostgresSchemas();

  it("rejects every call with CLOSED in under 100 ms", async () => {
    const schema = schemas.next();
    const b = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 1 });
    await b.setup();
    b.notifier.subscribe(() => undefined);
    const owner = { workerId: "w", claimToken: "00000000-0000-4000-8000-000000000000" };
    const id = newJob().id;
    await b.close();
    await b.close(); // idempotent
    const calls: Array<() => Promise<unknown>> = [
      () => b.setup(),
      () => b.now(),
      () => b.jobEnqueue({ jobs: [newJob()] }),
      () => b.jobEnqueue({ jobs: [] }),
      () => b.jobClaim({ workerId: "w", queues: null, limit: 1 }),
      () => b.jobComplete({ id, owner, result: null, resultRetentionSeconds: 60 }),
      () => b.jobRetry({ id, owner, error: "x", delaySeconds: 0 }),
      () => b.jobDeadLetter({ id, owner, error: "x", reason: "r", countAttempt: true }),
      () => b.jobSnooze({ id, owner, delaySeconds: 0 }),
      () => b.jobNack({ id, owner }),
      () => b.deadLetterReplay({ id }),
      () => b.jobCancel({ id, retentionSeconds: 60 }),
      () => b.jobGet({ id }),
      () => b.deadLetterGet({ id }),
      () => b.jobStats(),
      () => b.workerRegister({ id: "w", hostname: "h", pid: 1, queues: null, concurrency: 1 }),
      () => b.workerHeartbeat({ workerId: "w", status: "running" }),
      () => b.workerMarkStopped({ workerId: "w" }),
      () => b.workerList({ heartbeatTimeoutSeconds: 60 }),
      () => b.jobPruneFinished({}),
    ];
    for (const call of calls) {
      const started = performance.now();
      const err = await call().catch((e: unknown) => e);
      expect(performance.now() - started).toBeLessThan(100);
      expect(isSoniqError(err, "CLOSED")).toBe(true);
    }
    expect(typeof b.notifier.subscribe(() => undefined)).toBe("function");
  });

  it("lets in-flight calls finish, then rejects later ones", async () => {
    const schema = schemas.next();
    const b = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 1 });
    await b.setup();
    const inflight = b.jobEnqueue({ jobs: [newJob()] });
    await b.close();
    await expect(inflight).resolves.toHaveLength(1);
    const err = await b.jobStats().catch((e: unknown) => e);
    expect(isSoniqError(err, "CLOSED")).toBe(true);
  });
});
