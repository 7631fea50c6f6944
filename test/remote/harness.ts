/**
 * Test harness for remote jobs in-process: a Soniq instance on a fresh memory, SQLite-file or
 * PostgreSQL store, with one remote job (`music.generate`) against the local test provider; the
 * behaviour of each job comes from its arguments.
 */
import { join } from "node:path";
import { pino } from "pino";
import type { Backend } from "../../src/backends/contract/index.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import {
  accepted,
  done,
  failed,
  MemoryBackend,
  notSubmitted,
  pending,
  Soniq,
} from "../../src/index.js";
import { freshSchema, postgresAvailable, TEST_DATABASE_URL } from "../helpers/postgres.js";
import type { ProviderBehaviour, RemoteProvider } from "../helpers/remote-provider.js";
import { tempDir } from "../helpers/temp.js";

export const pgUp = await postgresAvailable();

/** The engines every remote test runs on. */
export const engines = [
  { label: "memory", skip: false },
  { label: "sqlite", skip: false },
  { label: "postgres", skip: !pgUp },
] as const;

export type Engine = (typeof engines)[number]["label"];

export const schemas: string[] = [];

/** A fresh, set-up backend of `engine`. */
export async function freshBackend(engine: Engine): Promise<Backend> {
  let backend: Backend;
  if (engine === "memory") backend = new MemoryBackend();
  else if (engine === "sqlite") {
    backend = new SqliteBackend({ path: join(tempDir("soniq-remote-"), "soniq.db") });
  } else {
    const schema = freshSchema("soniq_remote");
    schemas.push(schema);
    backend = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 4 });
  }
  await backend.setup();
  return backend;
}

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
