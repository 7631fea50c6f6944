/**
 * The queues page: counts, oldest claimable age, paused state and `maxRunning`; pause, resume and
 * set the limit when granted; the last 24 h of one queue charted per minute (`#/queues?queue=`).
 */
import { useState } from "preact/hooks";
import type { QueueJson } from "../../../admin/json/queue.js";
import { api, type Me } from "../api.js";
import { HistoryCharts } from "../charts.js";
import { duration, ErrorLine, Table } from "../components.js";
import { usePolled } from "../hooks.js";

/** See the module comment. */
export function QueuesPage({ me, params }: { me: Me; params: URLSearchParams }) {
  const chosen = params.get("queue");
  const { data, error, reload } = usePolled(
    () => api<{ queues: QueueJson[] }>("GET", "api/queues"),
    [],
  );
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
        head={["queue", "queued", "processing", "oldest due", "paused", "maxRunning", "24 h", ""]}
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
      {chosen ? <HistoryCharts queue={chosen} /> : null}
    </div>
  );
}
