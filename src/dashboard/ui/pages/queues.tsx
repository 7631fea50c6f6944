/**
 * The queues page: counts, oldest claimable age, paused state and `maxRunning`; jobs held back
 * by a per-key concurrency limit and by a rate limit, and the next window; pause, resume and set
 * the limit when granted; the last 24 h of one queue charted per minute and its top keys (running
 * counts, held jobs) (`#/queues?queue=`), or the top keys of every queue.
 */
import { useState } from "preact/hooks";
import type { KeyFlowJson, QueueFlowJson } from "../../../admin/json/flow.js";
import type { QueueJson } from "../../../admin/json/queue.js";
import { api, type Me } from "../api.js";
import { HistoryCharts } from "../charts.js";
import { duration, ErrorLine, Table, When } from "../components.js";
import { usePolled } from "../hooks.js";

/** See the module comment. */
export function QueuesPage({ me, params }: { me: Me; params: URLSearchParams }) {
  const chosen = params.get("queue");
  const { data, error, reload } = usePolled(
    () => api<{ queues: QueueJson[] }>("GET", "api/queues"),
    [],
  );
  const flowPolled = usePolled(() => api<{ flow: QueueFlowJson[] }>("GET", "api/flow?top=10"), []);
  const flows = flowPolled.data?.flow ?? [];
  const flowOf = (name: string) => flows.find((f) => f.queue === name);
  const topKeys = flows
    .filter((f) => !chosen || f.queue === chosen)
    .flatMap((f) => f.topKeys)
    .sort(
      (a, b) =>
        b.running - a.running ||
        b.heldByConcurrency + b.heldByRate - (a.heldByConcurrency + a.heldByRate),
    )
    .slice(0, 10);
  const [message, setMessage] = useState<string | null>(null);
  const canPause = me.actions.includes("queues.pause");
  const canSet = me.actions.includes("queues.set");
  async function run(method: string, path: string, body?: unknown) {
    try {
      await api(method, path, body);
      setMessage(null);
      reload();
    } catch (err) {
      setMessage(err instanceof Error ? err.message : String(err));
    }
  }
  function setLimit(name: string, current: number | null) {
    const text = window.prompt(
      `maxRunning for ${name} (empty: no limit)`,
      current === null ? "" : String(current),
    );
    if (text === null) return;
    void run("PATCH", `api/queues/${encodeURIComponent(name)}`, {
      maxRunning: text.trim() === "" ? null : Number(text),
    });
  }
  return (
    <div>
      <h2>Queues</h2>
      <ErrorLine error={error ?? message} />
      <Table
        head={[
          "queue",
          "queued",
          "processing",
          "oldest due",
          "paused",
          "maxRunning",
          "held (concurrency)",
          "held (rate)",
          "next window",
          "24 h",
          "",
        ]}
      >
        {(data?.queues ?? []).map((q) => (
          <tr key={q.name}>
            <td>
              <a href={`#/jobs?queue=${encodeURIComponent(q.name)}`}>{q.name}</a>
            </td>
            <td>{q.queued}</td>
            <td>{q.processing}</td>
            <td>{duration(q.oldestDueAgeSeconds)}</td>
            <td>{q.paused ? "paused" : ""}</td>
            <td>{q.maxRunning ?? "—"}</td>
            <td data-testid={`held-concurrency-${q.name}`}>
              {flowOf(q.name)?.heldByConcurrency ?? 0}
            </td>
            <td data-testid={`held-rate-${q.name}`}>{flowOf(q.name)?.heldByRate ?? 0}</td>
            <td>
              <When at={flowOf(q.name)?.nextWindowAt ?? null} />
            </td>
            <td>
              <a
                href={`#/queues?queue=${encodeURIComponent(q.name)}`}
                data-testid={`history-link-${q.name}`}
              >
                chart
              </a>
            </td>
            <td>
              {canPause && (
                <button
                  type="button"
                  onClick={() =>
                    run(
                      "POST",
                      `api/queues/${encodeURIComponent(q.name)}/${q.paused ? "resume" : "pause"}`,
                    )
                  }
                >
                  {q.paused ? "Resume" : "Pause"}
                </button>
              )}
              {canSet && (
                <button type="button" onClick={() => setLimit(q.name, q.maxRunning)}>
                  Set maxRunning
                </button>
              )}
            </td>
          </tr>
        ))}
      </Table>
      <ErrorLine error={flowPolled.error} />
      {topKeys.length > 0 ? <TopKeys keys={topKeys} queue={chosen} /> : null}
      {chosen ? <HistoryCharts queue={chosen} /> : null}
    </div>
  );
}

/** `n/limit`, or `n` without a limit. */
function ofLimit(n: number, limit: number | null): string {
  return limit === null ? String(n) : `${n}/${limit}`;
}

/** The keys with the most running jobs, then the most held, of one queue or of every queue. */
function TopKeys({ keys, queue }: { keys: KeyFlowJson[]; queue: string | null }) {
  return (
    <section data-testid="top-keys">
      <h3>Top keys{queue ? ` of ${queue}` : ""}</h3>
      <Table
        head={[
          "queue",
          "key",
          "running",
          "due",
          "held (concurrency)",
          "starts in window",
          "held (rate)",
          "next window",
        ]}
      >
        {keys.map((k) => (
          <tr key={`${k.queue}\u0000${k.key}`} data-testid={`key-${k.key}`}>
            <td>{k.queue}</td>
            <td>{k.key}</td>
            <td>{ofLimit(k.running, k.concurrencyLimit)}</td>
            <td>{k.due}</td>
            <td>{k.heldByConcurrency}</td>
            <td>{k.rateLimit === null ? "—" : ofLimit(k.startsInWindow, k.rateLimit)}</td>
            <td>{k.heldByRate}</td>
            <td>
              <When at={k.nextWindowAt} />
              {k.pausedUntil ? " (paused)" : ""}
            </td>
          </tr>
        ))}
      </Table>
    </section>
  );
}
