// A separate process for the multi-process claim case: claims until the pool is empty, completes
// each job it claimed and prints one claimed id per line. All claimers start on the parent's "go".
import { createBackend } from "../../src/backends/select.js";

const [databaseUrl, schema, workerId] = process.argv.slice(2);
if (!databaseUrl || !schema || !workerId)
  throw new Error("usage: claimer-process URL SCHEMA WORKER_ID");
const backend = await createBackend({ databaseUrl, schema, poolSize: 2 });
await backend.jobStats(); // connected
// Start together: say "ready" and wait for the parent's "go" on stdin.
process.stderr.write("ready\n");
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
process.stdin.pause();
const ids: string[] = [];
let empty = 0;
while (empty < 3) {
  const jobs = await backend.jobClaim({ workerId, queues: null, limit: 5 });
  if (jobs.length === 0) {
    empty += 1;
    await new Promise((r) => setTimeout(r, 20));
    continue;
  }
  empty = 0;
  for (const job of jobs) {
    ids.push(job.id);
    const ok = await backend.jobComplete({
      id: job.id,
      owner: { workerId, claimToken: job.claimToken },
      result: null,
      resultRetentionSeconds: 3600,
    });
    if (!ok) throw new Error(`complete of ${job.id} was fenced out`);
  }
}
await backend.close();
process.stdout.write(ids.map((id) => `${id}\n`).join(""));
