// The start/stop stress (helpers/service-stress.ts) on every background activity of a worker: the
// claim loop, the heartbeat, the completion batcher, the remote poller, the health server, and
// PostgreSQL's LISTEN connection.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { PgListener } from "../../src/backends/postgres/listener.js";
import { SoniqError } from "../../src/errors.js";
import { HealthServer } from "../../src/observability/health/health-server.js";
import { ClaimLoop } from "../../src/worker/claim-loop.js";
import { CompletionBatcher } from "../../src/worker/completion-batcher.js";
import { Heartbeat } from "../../src/worker/heartbeat.js";
import { InFlightTable } from "../../src/worker/in-flight.js";
import type { RemotePollRunner } from "../../src/worker/remote-poll.js";
import { RemotePoller } from "../../src/worker/remote-poller.js";
import { ShutdownMachine } from "../../src/worker/shutdown-machine.js";
import { WakeLatch } from "../../src/worker/wake-latch.js";
import { postgresAvailable, TEST_DATABASE_URL } from "../helpers/postgres.js";
import { stressStartStop } from "../helpers/service-stress.js";
import { memoryBackend } from "../helpers/test-backends.js";

const logger = pino({ level: "silent" });

async function registered(): Promise<Backend> {
  const backend = await memoryBackend();
  await backend.workerRegister({
    id: "w1",
    hostname: "h",
    pid: 1,
    queues: null,
    concurrency: 2,
  });
  return backend;
}

function claimLoop(backend: Backend): ClaimLoop {
  const latch = new WakeLatch();
  return new ClaimLoop({
    backend,
    workerId: "w1",
    queues: null,
    names: () => null,
    concurrency: 2,
    pollIntervalSeconds: 0.005,
    table: new InFlightTable(() => latch.wake()),
    latch,
    logger,
    dispatch: () => undefined,
    releaseLate: () => undefined,
  });
}

describe("worker services under start/stop stress", () => {
  it("claim loop › concurrent starts and stops › ends idle within its bound", async () => {
    const backend = await registered();
    await stressStartStop(() => claimLoop(backend));
  });

  it("heartbeat › concurrent starts and stops › ends idle within its bound", async () => {
    const backend = await registered();
    await stressStartStop(
      () =>
        new Heartbeat({
          backend,
          workerId: "w1",
          intervalSeconds: 0.005,
          logger,
          report: () => ({
            status: "running",
            shutdownState: "RUNNING",
            drainElapsedSeconds: null,
            deadlineInSeconds: null,
          }),
          progress: () => ({ reports: [], written: () => undefined }),
          onCancelRequested: () => undefined,
          isTracked: () => false,
          orphans: { claimInFlight: false, takeOrphanSuspicion: () => false },
          now: Date.now,
        }),
    );
  });

  it("completion batcher › concurrent starts and stops › ends idle and refuses while stopped", async () => {
    const backend = await registered();
    let last: CompletionBatcher | undefined;
    await stressStartStop(() => {
      last = new CompletionBatcher({ backend, retentionSeconds: 60, logger });
      return last;
    });
    const stopped = last as CompletionBatcher;
    await expect(
      stopped.complete({ id: "x", owner: { workerId: "w1", claimToken: "none" }, result: null }),
    ).rejects.toSatisfy((err) => err instanceof SoniqError && err.code === "CLOSED");
  });

  it("remote poller › concurrent starts and stops › ends idle within its bound", async () => {
    const backend = await registered();
    await stressStartStop(
      () =>
        new RemotePoller({
          backend,
          workerId: "w1",
          logger,
          machine: new ShutdownMachine(30, Date.now),
          table: new InFlightTable(() => undefined),
          concurrency: 2,
          intervalMs: 3,
          definitions: new Map(),
          // Never called: nothing is due on an empty backend; each tick still claims.
          runner: {} as RemotePollRunner,
          parseArgs: async () => undefined,
        }),
    );
  });

  it("health server › concurrent starts and stops › ends idle within its bound", async () => {
    let last: HealthServer | undefined;
    await stressStartStop(() => {
      last = new HealthServer({
        handler: (_request, response) => response.end("ok"),
        port: 0,
        host: "127.0.0.1",
        logger,
      });
      return last;
    });
    expect(last?.state).toBe("idle");
  });

  it("LISTEN connection › concurrent starts and stops › ends idle within its bound", async (ctx) => {
    if (!(await postgresAvailable())) ctx.skip();
    await stressStartStop(
      () =>
        new PgListener({
          connectionString: TEST_DATABASE_URL,
          channel: "soniq_stress_test",
          onNotify: () => undefined,
          onReconnect: () => undefined,
          onError: () => undefined,
        }),
    );
  }, 60_000);
});
