/**
 * A pg-boss worker process: the benchmark's work() loops, and on SIGTERM the documented
 * graceful `stop()` (waits for jobs in progress, then closes the pool) followed by exit.
 */
import { newBoss, PGBOSS_QUEUE, startPgBossWorkers } from "../adapters/pgboss-config.js";
import { childConcurrency, childHandler } from "./protocol.js";

const url = process.env.BENCH_PG_URL;
if (!url) throw new Error("BENCH_PG_URL is not set");

const boss = newBoss(url);
await boss.start();
await boss.createQueue(PGBOSS_QUEUE);
await startPgBossWorkers(boss, childConcurrency(), childHandler());

let stopping = false;
process.on("SIGTERM", () => {
  if (stopping) return;
  stopping = true;
  void boss.stop({ graceful: true, wait: true, timeout: 30_000 }).then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
