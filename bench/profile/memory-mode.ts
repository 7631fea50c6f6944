/**
 * Per-job cost of memory mode through the backend contract: enqueue one job, claim it, complete
 * it, in a loop — microseconds per job. `--root DIR` measures the MemoryBackend of another
 * checkout (e.g. an older commit's `src/` in a temporary clone), so two implementations can be
 * compared in one run:
 *
 *   node --import tsx bench/profile/memory-mode.ts [--root /tmp/old] [--jobs 20000] [--rounds 5]
 */
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { Backend } from "../../src/backends/contract/index.js";

const { values } = parseArgs({
  options: {
    root: { type: "string", default: "." },
    jobs: { type: "string", default: "20000" },
    rounds: { type: "string", default: "5" },
  },
});
const jobs = Number(values.jobs);
const rounds = Number(values.rounds);
const moduleUrl = pathToFileURL(
  resolve(values.root ?? ".", "src/backends/memory/memory-backend.ts"),
).href;
const { MemoryBackend } = (await import(moduleUrl)) as {
  MemoryBackend: new () => Backend;
};

/** One round: `count` jobs through enqueue → claim → complete; returns µs per job. */
async function round(count: number): Promise<number> {
  const backend = new MemoryBackend();
  await backend.setup();
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    await backend.jobEnqueue({
      jobs: [
        {
          id,
          name: "bench.noop",
          queue: "default",
          args: "{}",
          priority: 0,
          maxAttempts: 3,
          runAt: null,
          delaySeconds: 0,
          dedupKey: null,
        },
      ],
    });
    const [job] = await backend.jobClaim({ workerId: "bench", queues: null, limit: 1 });
    if (job === undefined) throw new Error("nothing claimed");
    await backend.jobComplete({
      id: job.id,
      owner: { workerId: job.workerId, claimToken: job.claimToken },
      result: null,
      resultRetentionSeconds: 3600,
    });
  }
  const micros = Number(process.hrtime.bigint() - started) / 1000 / count;
  await backend.close();
  return micros;
}

await round(Math.min(jobs, 2000)); // warm-up
const results: number[] = [];
for (let r = 0; r < rounds; r++) results.push(await round(jobs));
results.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    root: values.root,
    jobs,
    rounds: results.map((r) => Number(r.toFixed(1))),
    medianMicrosPerJob: Number(results[Math.floor(results.length / 2)]?.toFixed(1)),
  }),
);
