/**
 * `npm start`: hash and gzip every file under a directory with Soniq on the embedded SQLite
 * default, with a progress bar. Ctrl-C drains gracefully; running it again finishes the rest
 * without redoing finished files.
 *
 *   npm start                      # every file under ./node_modules
 *   npm start -- --dir /usr/share  # another directory
 *   npm start -- --concurrency 16
 */
import { randomUUID } from "node:crypto";
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { SingleBar } from "cli-progress";
import { DATABASE_URL, digestFile, postReport, receiver, soniq } from "./jobs.js";
import { startReceiver } from "./receiver.js";

const { values } = parseArgs({
  options: {
    dir: { type: "string", default: "node_modules" },
    concurrency: { type: "string", default: "8" },
    "report-every": { type: "string", default: "1000" },
  },
});
const root = resolve(values.dir);
const concurrency = Number(values.concurrency);
const reportEvery = Number(values["report-every"]);
if (!Number.isInteger(concurrency) || concurrency < 1)
  throw new Error("--concurrency must be an integer >= 1");
if (!Number.isInteger(reportEvery) || reportEvery < 1)
  throw new Error("--report-every must be an integer >= 1");

process.stderr.write(
  `database: ${DATABASE_URL.replace(/\/\/[^@/]*@/, "//***@")} (the example's own; EXAMPLE_DATABASE_URL chooses another)\n`,
);

async function* walk(dir: string): AsyncGenerator<string> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return; // unreadable directory: skip
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile()) yield path;
  }
}

const started = Date.now();
await soniq.setup();
const http = await startReceiver();
receiver.url = http.url;
const run = randomUUID().slice(0, 8);

// Enqueue every file. A file already enqueued (same path, size and mtime) returns the existing
// job instead of a new one, so a rerun does not redo finished files.
process.stderr.write(`soniq example: scanning ${root}\n`);
let files = 0;
let batch: Array<{ args: { root: string; path: string; size: number; mtimeMs: number } }> = [];
const flush = async () => {
  if (batch.length > 0) await digestFile.enqueueMany(batch);
  batch = [];
};
for await (const path of walk(root)) {
  const info = await stat(path).catch(() => null);
  if (!info) continue;
  batch.push({ args: { root, path, size: info.size, mtimeMs: Math.trunc(info.mtimeMs) } });
  files += 1;
  if (batch.length >= 500) await flush();
  if (files % reportEvery === 0) await postReport.enqueue({ run, files });
}
await flush();
await postReport.enqueue({ run, files });

const worker = soniq.worker({ concurrency, shutdownTimeout: 10 });
let stopping = false;
const stop = (signal: string) => {
  if (!stopping && signal !== "finished") {
    process.stderr.write(
      `\nsoniq example: ${signal} — draining: in-flight files finish (up to 10 s), the rest stay queued for the next run…\n`,
    );
  }
  stopping = true;
  void worker.stop(signal);
};
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));

const bar = new SingleBar({
  format: "{bar} {percentage}% | {value}/{total} jobs | {eta_formatted} left",
  hideCursor: true,
  stream: process.stderr,
});
const first = await soniq.stats();
bar.start(first.total, first.done + first.deadLetter);
await worker.start();

const progress = setInterval(async () => {
  const s = await soniq.stats().catch(() => null);
  if (!s) return;
  bar.setTotal(s.total);
  bar.update(s.done + s.deadLetter);
  if (s.queued === 0 && s.processing === 0 && !stopping) stop("finished");
}, 200);

const exit = await worker.finished;
clearInterval(progress);
const final = await soniq.stats();
bar.update(final.done + final.deadLetter);
bar.stop();
await http.close();
await soniq.close();

const seconds = (Date.now() - started) / 1000;
process.stdout.write(
  [
    "",
    `Files found:      ${files} under ${root}`,
    `Jobs done:        ${final.done - first.done} in this run, ${final.done} in this database (file digests and progress reports)`,
    `Jobs failed:      ${final.deadLetter} (in the dead-letter queue)`,
    `Jobs left:        ${final.queued} queued, ${final.processing} processing${final.queued > 0 ? " — run npm start again to finish" : ""}`,
    `Reports received: ${http.reports.length} in this run`,
    `Output:           ${process.env.EXAMPLE_OUTPUT_DIR ?? ".soniq-example/out"}`,
    `Time:             ${seconds.toFixed(1)} s`,
    `Worker exit:      ${exit.reason} (code ${exit.exitCode})`,
    "",
  ].join("\n"),
);
process.exitCode = exit.exitCode;
