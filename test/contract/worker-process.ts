// A separate worker process for the operations cases (pause across processes, maxRunning across
// ten processes): a Soniq worker on the given store, claiming QUEUE with CONCURRENCY slots and
// polling every 0.1 s. Its one job, `op.sleep`, sleeps args.ms. Says "ready" on stderr once
// started; drains and exits on SIGTERM.
import { pino } from "pino";
import { Soniq } from "../../src/index.js";

const [databaseUrl, schema, queue, concurrency] = process.argv.slice(2);
if (!databaseUrl || !schema || !queue || !concurrency)
  throw new Error("usage: worker-process URL SCHEMA QUEUE CONCURRENCY");
const soniq = new Soniq({
  databaseUrl,
  schema,
  env: {},
  logger: pino({ level: "silent" }),
  pollInterval: 0.1,
  heartbeatInterval: 0.2,
  heartbeatTimeout: 2,
  poolSize: 2,
});
soniq.job({
  name: "op.sleep",
  queue,
  handler: (args: { ms: number }) => new Promise((resolve) => setTimeout(resolve, args.ms)),
});
const worker = soniq.worker({ concurrency: Number(concurrency), queues: [queue] });
process.on("SIGTERM", () => void worker.stop("SIGTERM"));
await worker.start();
process.stderr.write("ready\n");
await worker.finished;
await soniq.close();
