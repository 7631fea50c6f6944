/**
 * A BullMQ worker process: one Worker with the benchmark configuration, and on SIGTERM the
 * documented graceful shutdown (`worker.close()` waits for jobs in progress) followed by exit.
 */
import { newBullWorker } from "../adapters/bullmq-config.js";
import { childConcurrency, childHandler } from "./protocol.js";

const url = process.env.BENCH_REDIS_URL;
if (!url) throw new Error("BENCH_REDIS_URL is not set");

const worker = newBullWorker(url, childConcurrency(), childHandler());

let stopping = false;
process.on("SIGTERM", () => {
  if (stopping) return;
  stopping = true;
  void worker.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
