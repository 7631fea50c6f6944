/**
 * Test harness for remote jobs in-process: a Soniq instance on a given store (each suite gets its
 * stores from describeEachBackend: memory, a SQLite file and PostgreSQL), with one remote job
 * (`music.generate`) against the local test provider; the behaviour of each job comes from its
 * arguments.
 */
import { pino } from "pino";
import type { Backend } from "../../src/backends/contract/index.js";
import { accepted, done, failed, notSubmitted, pending, Soniq } from "../../src/index.js";
import type { ProviderBehaviour, RemoteProvider } from "../helpers/remote-provider.js";

/** Arguments of the test job. */
export interface GenArgs {
  behaviour?: ProviderBehaviour;
  /** Milliseconds the preflight waits (honouring ctx.signal). */
  preflightMs?: number;
  /** Make submit return this raw value instead of calling the provider. */
  raw?: unknown;
}

/** An instance with `music.generate` on `backend`, against `provider`. */
export function remoteInstance(
  backend: Backend,
  provider: RemoteProvider,
  options: {
    reconcile?: boolean;
    settings?: Record<string, unknown>;
    admission?: { maxConcurrent?: number; perMinute?: number };
    circuitBreaker?: { failureThreshold: number; windowSeconds: number; cooldownSeconds: number };
    pollTimeout?: number;
  } = {},
) {
  const soniq = new Soniq({
    backend,
    env: {},
    logger: pino({ level: "silent" }),
    pollInterval: 0.05,
    heartbeatInterval: 0.2,
    shutdownSettle: 0.1,
    ...options.settings,
  });
  const job = soniq.remoteJob({
    name: "music.generate",
    queue: "generation",
    submitTimeout: 5,
    pollEvery: 0.05,
    pollTimeout: options.pollTimeout ?? 60,
    retry: { kind: "fixed", delay: 0.05 },
    ...(options.admission ? { admission: options.admission } : {}),
    ...(options.circuitBreaker ? { circuitBreaker: options.circuitBreaker } : {}),
    preflight: async (args: GenArgs, ctx) => {
      if (!args.preflightMs) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, args.preflightMs);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      ctx.signal.throwIfAborted();
    },
    submit: async (args: GenArgs, ctx) => {
      if (args.raw !== undefined) return args.raw as ReturnType<typeof accepted>;
      const res = await fetch(`${provider.url}/tasks`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": ctx.idempotencyKey },
        body: JSON.stringify({ behaviour: args.behaviour ?? {} }),
        signal: ctx.signal,
      });
      const answer = (await res.json()) as { task_id?: string; error?: string };
      if (res.status === 202 && answer.task_id) return accepted(answer.task_id);
      return failed(answer.error ?? `HTTP ${res.status}`, { retry: res.status >= 500 });
    },
    poll: async (taskId, ctx) => {
      const res = await fetch(`${provider.url}/tasks/${encodeURIComponent(taskId)}`, {
        signal: ctx.signal,
      });
      const task = (await res.json()) as { status: string; output?: unknown };
      if (task.status === "processing") return pending();
      if (task.status === "succeeded") return done(task.output ?? null);
      return failed(`task ${task.status}`);
    },
    ...(options.reconcile
      ? {
          reconcile: async (
            _args: GenArgs,
            ctx: { idempotencyKey: string; signal: AbortSignal },
          ) => {
            const res = await fetch(
              `${provider.url}/tasks?idempotency_key=${encodeURIComponent(ctx.idempotencyKey)}`,
              { signal: ctx.signal },
            );
            if (res.status === 404) return notSubmitted();
            return accepted(((await res.json()) as { task_id: string }).task_id);
          },
        }
      : {}),
  });
  return { soniq, job };
}
