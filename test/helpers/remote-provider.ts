/**
 * A small, real local HTTP server that behaves like an async generation API: `POST /tasks` answers
 * `202 {"task_id"}`; `GET /tasks/:id` answers `{"status"}` —
 * `processing | succeeded | failed | canceled`; `GET /tasks?idempotency_key=K` finds a task by key
 * (what a `reconcile` uses). It counts POSTs per idempotency key and GETs per task id.
 *
 * Behaviour per request, from the POST body (synthetic jobs put it in their arguments):
 * `delayMs` (wait before answering), `drop` (accept the task, then destroy the connection without
 * answering — the ambiguous POST), `status` (answer this HTTP status without accepting; e.g. 400
 * or 503), `polls` (GETs that answer `processing` before the terminal one), `outcome`
 * (`succeeded` default, `failed`, `canceled`), `callback` (a URL the provider POSTs
 * `{"task_id","status"}` to as soon as it accepted, before answering the POST).
 * A repeated POST with a key it already accepted returns the same task (the provider is
 * idempotent by key) and is counted.
 */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname } from "node:path";

/** One accepted task. */
export interface ProviderTask {
  id: string;
  key: string;
  polls: number;
  outcome: "succeeded" | "failed" | "canceled";
  gets: number;
  /** Milliseconds each GET waits before answering. */
  pollDelayMs: number;
}

/** The provider's counters and tasks. */
export interface ProviderStats {
  /** POSTs per idempotency key (a value above 1 is a duplicate submission). */
  postsByKey: Map<string, number>;
  /** GETs per task id. */
  getsByTask: Map<string, number>;
  tasks: Map<string, ProviderTask>;
}

/** Per-request behaviour (the POST body). */
export interface ProviderBehaviour {
  delayMs?: number;
  drop?: boolean;
  status?: number;
  polls?: number;
  outcome?: "succeeded" | "failed" | "canceled";
  callback?: string;
  /** Milliseconds each GET of the task waits before answering. */
  pollDelayMs?: number;
}

/** A running provider. */
export interface RemoteProvider extends ProviderStats {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** Keys POSTed more than once. */
  duplicateKeys(): string[];
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

function send(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

/** Options of {@link startRemoteProvider}. */
export interface ProviderOptions {
  /** Port on 127.0.0.1; default a free one. */
  port?: number;
  /** Keep tasks and counters in this JSON file across restarts (the example uses it). */
  stateFile?: string;
}

/** Starts a provider on 127.0.0.1. */
export async function startRemoteProvider(options: ProviderOptions = {}): Promise<RemoteProvider> {
  const postsByKey = new Map<string, number>();
  const getsByTask = new Map<string, number>();
  const tasks = new Map<string, ProviderTask>();
  const byKey = new Map<string, string>();
  let next = 0;
  const { stateFile } = options;
  if (stateFile && existsSync(stateFile)) {
    const saved = JSON.parse(readFileSync(stateFile, "utf8")) as {
      posts: Array<[string, number]>;
      tasks: ProviderTask[];
    };
    for (const [k, n] of saved.posts) postsByKey.set(k, n);
    for (const t of saved.tasks) {
      tasks.set(t.id, t);
      byKey.set(t.key, t.id);
    }
    next = saved.tasks.length;
  }
  const save = () => {
    if (!stateFile) return;
    mkdirSync(dirname(stateFile), { recursive: true });
    writeFileSync(
      stateFile,
      JSON.stringify({ posts: [...postsByKey], tasks: [...tasks.values()] }),
    );
  };
  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { error: String(err) });
    });
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://provider");
    if (req.method === "POST" && url.pathname === "/tasks") {
      const input = await body(req);
      const key = String(req.headers["idempotency-key"] ?? input.idempotencyKey ?? "");
      const behaviour = (input.behaviour ?? {}) as ProviderBehaviour;
      postsByKey.set(key, (postsByKey.get(key) ?? 0) + 1);
      save();
      if (behaviour.status && behaviour.status !== 202) {
        if (behaviour.delayMs) await new Promise((r) => setTimeout(r, behaviour.delayMs));
        send(res, behaviour.status, { error: `synthetic ${behaviour.status}` });
        return;
      }
      let id = byKey.get(key);
      if (!id) {
        next += 1;
        id = `tsk_${next}_${Math.random().toString(36).slice(2, 8)}`;
        byKey.set(key, id);
        tasks.set(id, {
          id,
          key,
          polls: behaviour.polls ?? 1,
          outcome: behaviour.outcome ?? "succeeded",
          gets: 0,
          pollDelayMs: behaviour.pollDelayMs ?? 0,
        });
        save();
      }
      // Accepted on receipt; a slow provider is slow to answer, not to accept.
      if (behaviour.delayMs) await new Promise((r) => setTimeout(r, behaviour.delayMs));
      if (behaviour.callback) {
        await fetch(behaviour.callback, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ task_id: id, status: tasks.get(id)?.outcome }),
        }).catch(() => undefined);
      }
      if (behaviour.drop) {
        res.socket?.destroy();
        return;
      }
      send(res, 202, { task_id: id });
      return;
    }
    if (req.method === "GET" && url.pathname === "/tasks") {
      const id = byKey.get(url.searchParams.get("idempotency_key") ?? "");
      if (!id) send(res, 404, { error: "no such task" });
      else send(res, 200, { task_id: id });
      return;
    }
    const match = /^\/tasks\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && match) {
      const id = decodeURIComponent(match[1] as string);
      getsByTask.set(id, (getsByTask.get(id) ?? 0) + 1);
      const task = tasks.get(id);
      if (!task) {
        send(res, 404, { error: "no such task" });
        return;
      }
      task.gets += 1;
      save();
      if (task.pollDelayMs) await new Promise((r) => setTimeout(r, task.pollDelayMs));
      if (task.gets <= task.polls) send(res, 200, { task_id: id, status: "processing" });
      else send(res, 200, { task_id: id, status: task.outcome, output: { track: `${id}.mp3` } });
      return;
    }
    send(res, 404, { error: "not found" });
  }
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    postsByKey,
    getsByTask,
    tasks,
    duplicateKeys: () => [...postsByKey].filter(([, n]) => n > 1).map(([k]) => k),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
