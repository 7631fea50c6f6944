/**
 * The example's remote job: `music.generate` submits a synthetic generation task to the local test
 * provider (test/helpers/remote-provider.ts) and polls it by task id. Exported as a module, so
 * `soniq worker examples/remote-generation/jobs.ts` and `soniq remote …` can use it too.
 */
import { accepted, done, failed, notSubmitted, pending, Soniq } from "soniq";

/** The provider's URL (main.ts starts it on this port). */
export const PROVIDER_URL = process.env.EXAMPLE_PROVIDER_URL ?? "http://127.0.0.1:4545";

/**
 * The example's own database: never SONIQ_DATABASE_URL, which may point at your app's database
 * (the example would run, and dead-letter, its jobs). Set EXAMPLE_DATABASE_URL to choose another.
 */
export const DATABASE_URL = process.env.EXAMPLE_DATABASE_URL ?? "sqlite:.soniq-example/remote.db";

export const soniq = new Soniq({
  databaseUrl: DATABASE_URL,
  logLevel: process.env.SONIQ_LOG_LEVEL ? undefined : "warn",
  // Short, so Ctrl-C shows every disposition quickly: see docs/remote-jobs.md for the budget.
  shutdownTimeout: 3,
  shutdownSettle: 0.5,
  pollInterval: 0.2,
});

/** A generation request; `behaviour` tells the synthetic provider how to act (no real cost). */
export interface GenerateArgs {
  prompt: string;
  behaviour?: { delayMs?: number; polls?: number; outcome?: "succeeded" | "failed" };
}

export const generateTrack = soniq.remoteJob({
  name: "music.generate",
  queue: "generation",
  submitTimeout: 30,
  pollEvery: 1,
  pollTimeout: 3600,
  maxAttempts: 3,
  // Runs before `submitting` is written: bad input fails here, outside the ambiguous window.
  preflight: (args: GenerateArgs) => {
    if (args.prompt.length === 0) throw new Error("empty prompt");
  },
  submit: async (args: GenerateArgs, ctx) => {
    const res = await fetch(`${PROVIDER_URL}/tasks`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": ctx.idempotencyKey },
      body: JSON.stringify({ prompt: args.prompt, behaviour: args.behaviour ?? {} }),
      signal: ctx.signal,
    });
    const body = (await res.json()) as { task_id?: string; error?: string };
    if (res.status === 202 && body.task_id) return accepted(body.task_id);
    return failed(body.error ?? `HTTP ${res.status}`, { retry: res.status >= 500 });
  },
  poll: async (taskId, ctx) => {
    const res = await fetch(`${PROVIDER_URL}/tasks/${encodeURIComponent(taskId)}`, {
      signal: ctx.signal,
    });
    if (res.status === 404) return failed("the provider does not know this task");
    const task = (await res.json()) as { status: string; output?: unknown };
    if (task.status === "processing") return pending({ every: 1 });
    if (task.status === "succeeded") return done(task.output ?? null);
    return failed(`task ${task.status}`);
  },
  // Resolves a frozen submission without replaying it: look the task up by idempotency key.
  reconcile: async (_args: GenerateArgs, ctx) => {
    const res = await fetch(
      `${PROVIDER_URL}/tasks?idempotency_key=${encodeURIComponent(ctx.idempotencyKey)}`,
      { signal: ctx.signal },
    );
    if (res.status === 404) return notSubmitted();
    return accepted(((await res.json()) as { task_id: string }).task_id);
  },
});
