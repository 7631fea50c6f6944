/**
 * The example's jobs: `files.digest` computes a SHA-256 of a file and writes a gzip copy;
 * `report.post` posts a small progress report to the local HTTP receiver the example starts.
 * Exported as a module so `soniq worker examples/file-digest/jobs.ts` can run it too.
 */
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { appendFile, mkdir, rename, rm } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { Soniq } from "soniq";
import { z } from "zod";

/** Where gzip copies go (mirrors the input tree). */
export const OUTPUT_DIR = resolve(process.env.EXAMPLE_OUTPUT_DIR ?? ".soniq-example/out");

/** The receiver URL, set by main.ts once its HTTP server listens. */
export const receiver = { url: process.env.EXAMPLE_RECEIVER_URL ?? "" };

/**
 * The example's own database: never SONIQ_DATABASE_URL, which may point at your app's database.
 * Set EXAMPLE_DATABASE_URL to choose another.
 */
export const DATABASE_URL = process.env.EXAMPLE_DATABASE_URL ?? "sqlite:./soniq.db";

export const soniq = new Soniq({
  databaseUrl: DATABASE_URL,
  logLevel: process.env.SONIQ_LOG_LEVEL ? undefined : "warn",
  jobTimeout: 120,
});

export const digestFile = soniq.job({
  name: "files.digest",
  queue: "files",
  maxAttempts: 3,
  retry: { kind: "exponential", base: 0.5, max: 10 },
  uniqueByArgs: true,
  args: z.object({
    root: z.string(),
    path: z.string(),
    size: z.number().int().nonnegative(),
    mtimeMs: z.number(),
  }),
  handler: async (args, ctx) => {
    const rel = relative(args.root, args.path);
    const target = join(OUTPUT_DIR, `${rel}.gz`);
    const partial = `${target}.${ctx.jobId}.partial`;
    await mkdir(dirname(target), { recursive: true });
    const hash = createHash("sha256");
    let bytes = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        bytes += chunk.length;
        done(null, chunk);
      },
    });
    try {
      await pipeline(createReadStream(args.path), tap, createGzip(), createWriteStream(partial), {
        signal: ctx.signal,
      });
      await rename(partial, target);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    if (process.env.EXAMPLE_RUN_LOG) {
      await appendFile(process.env.EXAMPLE_RUN_LOG, `${ctx.jobId}\n`);
    }
    return { sha256: hash.digest("hex"), bytes, output: relative(OUTPUT_DIR, target) };
  },
});

export const postReport = soniq.job({
  name: "report.post",
  queue: "reports",
  priority: 10,
  maxAttempts: 3,
  retry: { kind: "fixed", delay: 1 },
  args: z.object({ run: z.string(), files: z.number().int() }),
  handler: async (args, ctx) => {
    if (!receiver.url)
      throw new Error("no report receiver is running (EXAMPLE_RECEIVER_URL unset)");
    const stats = await soniq.stats();
    const res = await fetch(receiver.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ run: args.run, files: args.files, stats, job_id: ctx.jobId }),
      signal: ctx.signal,
    });
    if (!res.ok) throw new Error(`receiver answered ${res.status}`);
    return { status: res.status };
  },
});

export default soniq;
