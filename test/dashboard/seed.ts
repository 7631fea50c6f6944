/**
 * A dashboard test instance and its data, seeded through the public API only: queued jobs, a done
 * job with a large result, a dead letter and a retried job whose errors, arguments and results
 * carry hostile text (script tags, `javascript:` URLs, NUL, lone surrogates, a right-to-left
 * override).
 */
import { Soniq, type SoniqOptions } from "../../src/index.js";
import { waitFor } from "../helpers/wait.js";

/** Text that would run script if a page put it into HTML. */
export const HOSTILE = `<img src=x onerror="window.__pwned=1;alert(1)"></script><script>alert(2)</script>javascript:alert(3)`;

/** The arguments every seeded job carries. */
export const HOSTILE_ARGS = {
  html: HOSTILE,
  url: "javascript:alert(4)",
  nul: "a\u0000b",
  lone: "x\ud800y",
  bidi: "invoice\u202Egnp.exe",
  nested: { "<b>key</b>": [HOSTILE] },
};

/** Ids of what {@link seed} wrote. */
export interface Seeded {
  queued: string;
  done: string;
  dead: string;
  retried: string;
}

/** A Soniq instance with the seed's job definitions (not yet seeded). */
export function seededInstance(options: SoniqOptions, resultBytes: number): Soniq {
  const soniq = new Soniq({
    logLevel: "silent",
    maxPayloadBytes: resultBytes + 1024 * 1024,
    ...options,
  });
  soniq.job({
    name: "hostile.big",
    queue: "bulk",
    handler: async () => `${HOSTILE}${"x".repeat(resultBytes)}`,
  });
  soniq.job({
    name: "hostile.fail",
    maxAttempts: 1,
    handler: async () => {
      throw new Error(`${HOSTILE} \u0000 \ud800`);
    },
  });
  soniq.job({
    name: "hostile.retry",
    maxAttempts: 5,
    retry: { kind: "fixed", delay: 3600 },
    handler: async () => {
      throw new Error(`${HOSTILE} report\u202Egnp.exe`);
    },
  });
  soniq.job({ name: "hostile.wait", queue: "later", handler: async () => null });
  return soniq;
}

/** Seeds `soniq` by enqueueing and running one worker until every outcome is recorded. */
export async function seed(soniq: Soniq): Promise<Seeded> {
  await soniq.setup();
  const queued = await soniq.enqueue("hostile.wait", HOSTILE_ARGS, { delay: 3600 });
  const done = await soniq.enqueue("hostile.big", HOSTILE_ARGS);
  const dead = await soniq.enqueue("hostile.fail", HOSTILE_ARGS);
  const retried = await soniq.enqueue("hostile.retry", HOSTILE_ARGS);
  const worker = soniq.worker({ concurrency: 4, pollInterval: 0.05 });
  await worker.start();
  await waitFor(
    async () => {
      const [a, b, c] = await Promise.all([
        soniq.jobs.get(done),
        soniq.jobs.get(dead),
        soniq.jobs.get(retried),
      ]);
      return a?.status === "done" && b?.status === "dead_letter" && (c?.attempts ?? 0) >= 1;
    },
    20_000,
    "the seeded outcomes",
  );
  await worker.stop();
  return { queued, done, dead, retried };
}
