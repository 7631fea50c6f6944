/**
 * `npm run example:remote`: remote jobs against a local synthetic generation API, on SQLite.
 * It starts the test provider (state kept in .soniq-example/provider.json), enqueues a few
 * generation jobs (slow POSTs, slow tasks) and runs a worker, printing every phase change and
 * hand-off. Press Ctrl-C while jobs are submitting: the worker drains — work not yet submitting is
 * released, a POST without an answer by the deadline is frozen, accepted tasks are handed to
 * polling — and prints how to inspect them with `soniq remote list`. Run it again to finish.
 *
 *   npm run example:remote                 # 6 jobs the first time, then resumes
 *   npm run example:remote -- --jobs 12
 */
import { parseArgs } from "node:util";
import { startRemoteProvider } from "../../test/helpers/remote-provider.js";
import { DATABASE_URL, generateTrack, PROVIDER_URL, soniq } from "./jobs.js";

const { values } = parseArgs({ options: { jobs: { type: "string", default: "6" } } });
const count = Number(values.jobs);
if (!Number.isInteger(count) || count < 0) throw new Error("--jobs must be an integer >= 0");

const provider = await startRemoteProvider({
  port: Number(new URL(PROVIDER_URL).port), // 4545 unless EXAMPLE_PROVIDER_URL says otherwise
  stateFile: ".soniq-example/provider.json",
});
await soniq.setup();
const stats = await soniq.stats();
if (stats.total === 0) {
  for (let i = 0; i < count; i += 1) {
    // Every other POST answers only after 6 s: Ctrl-C during it shows a frozen submission.
    await generateTrack.enqueue({
      prompt: `track ${i + 1}`,
      behaviour: { delayMs: i % 2 === 0 ? 6000 : 500, polls: 4 },
    });
  }
  process.stderr.write(`enqueued ${count} generation jobs\n`);
}

const say = (text: string) =>
  process.stderr.write(`${new Date().toISOString().slice(11, 23)}  ${text}\n`);
soniq.events.on("remote_phase", (e) =>
  say(`${e.job_id}  phase ${e.phase}${e.task_id ? ` (task ${e.task_id})` : ""}`),
);
soniq.events.on("remote_handoff", (e) =>
  say(`${e.job_id}  ${e.handoff_action} (${e.reason}, was ${e.phase})`),
);
soniq.events.on("job_done", (e) => say(`${e.job_id}  done`));
say(
  `database: ${DATABASE_URL.replace(/\/\/[^@/]*@/, "//***@")} (the example's own; EXAMPLE_DATABASE_URL chooses another)`,
);

const worker = soniq.worker({ concurrency: 4 });
let stopping = false;
const onSignal = (signal: NodeJS.Signals) => {
  if (!stopping) say(`${signal}: draining (deadline ${soniq.settings.shutdownTimeout} s)`);
  stopping = true;
  void worker.stop(signal);
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);
await worker.start();

// Without Ctrl-C: stop once nothing is left to do.
const idle = setInterval(async () => {
  // Remote jobs in flight are counted apart from `processing` (submitting, accepted, frozen).
  const s = await soniq.stats();
  const remote = s.remoteSubmitting + s.remoteAccepted + s.remoteFrozen;
  if (s.queued === 0 && s.processing === 0 && remote === 0) void worker.stop("done");
}, 1000);

const exit = await worker.finished;
clearInterval(idle);
const counts = await soniq.remote.counts();
say(`worker stopped: ${exit.reason} (exit ${exit.exitCode}); released ${exit.released.length}`);
say(`remote jobs now: ${counts.awaiting} awaiting, ${counts.frozen} frozen`);
if (counts.awaiting + counts.frozen > 0 || exit.released.length > 0) {
  say(`see them:   npx soniq remote list --database-url ${DATABASE_URL}`);
  say(
    `resolve:    npx soniq remote resolve <job-id> --not-submitted --database-url ${DATABASE_URL}`,
  );
  say("or run `npm run example:remote` again: reconcile finds frozen ones by idempotency key");
}
await soniq.close();
await provider.close();
process.exitCode = exit.exitCode;
