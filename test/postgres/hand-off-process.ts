// A worker process that also enqueues (hand-off at enqueue needs both in one process), for the
// signal test in hand-off.test.ts: a Soniq worker on queue `h` (2 slots); a line `enqueue` on
// stdin enqueues one `h.job` with dedup key `k` (its hand-off statement may wait on the parent's
// uncommitted holder of that key). Reports on stderr: `ready`, `ran <id>` when a handler starts,
// `enqueued <id>` or `enqueue failed`, `exit <code>`; drains on SIGTERM and exits with the worker's
// code.
import { createInterface } from "node:readline";
import { pino } from "pino";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { Soniq } from "../../src/index.js";

const [databaseUrl, schema] = process.argv.slice(2);
if (!databaseUrl || !schema) throw new Error("usage: hand-off-process URL SCHEMA");
const backend = new PostgresBackend({ connectionString: databaseUrl, schema, poolSize: 2 });
// Ready once the worker is idle (no poll for 5 s): its LISTEN is in place (which wakes every
// queue: "*"), the claim that wake-up starts has answered, and no claim has run for 300 ms.
let idle: (() => void) | undefined;
const claimed = new Promise<void>((resolve) => {
  idle = resolve;
});
let listening = false;
let inFlight = 0;
let lastClaimEnd = 0;
backend.notifier.subscribe((queue) => {
  if (queue === "*") listening = true;
});
const claim = backend.jobClaim.bind(backend);
backend.jobClaim = async (params) => {
  inFlight += 1;
  try {
    return await claim(params);
  } finally {
    inFlight -= 1;
    lastClaimEnd = Date.now();
    if (listening) {
      setTimeout(() => {
        if (inFlight === 0 && Date.now() - lastClaimEnd >= 300) idle?.();
      }, 300);
    }
  }
};
const soniq = new Soniq({
  backend,
  env: {},
  logger: pino({ level: "silent" }),
  pollInterval: 5,
  heartbeatInterval: 0.2,
});
const job = soniq.job({
  name: "h.job",
  queue: "h",
  handler: async (_args: unknown, ctx) => {
    process.stderr.write(`ran ${ctx.jobId}\n`);
  },
});
const worker = soniq.worker({ concurrency: 2, queues: ["h"] });
process.on("SIGTERM", () => void worker.stop("SIGTERM"));
await worker.start();
await claimed;
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() !== "enqueue") return;
  job.enqueue({}, { dedupKey: "k" }).then(
    (id) => process.stderr.write(`enqueued ${id}\n`),
    () => process.stderr.write("enqueue failed\n"),
  );
});
process.stderr.write("ready\n");
const exit = await worker.finished;
await soniq.close();
process.stderr.write(`exit ${exit.exitCode}\n`);
process.exit(exit.exitCode);
