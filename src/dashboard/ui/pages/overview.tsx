/** The overview page: counts by queue × status, the last 24 h charted per minute, 1 h / 24 h windows, oldest age, DLQ reasons, workers, frozen remote jobs, jobs waiting for a worker that can run them, warnings. */
import type { Overview } from "../../overview.js";
import { api } from "../api.js";
import { HistoryCharts } from "../charts.js";
import { duration, ErrorLine, Table } from "../components.js";
import { usePolled } from "../hooks.js";

/** `queued` is due now, `scheduled` queued but due later (the server's database clock). */
const STATUSES = ["queued", "scheduled", "processing", "done", "cancelled", "dead_letter"];

/** See the module comment. */
export function OverviewPage() {
  const { data, error } = usePolled(() => api<Overview>("GET", "api/overview"), []);
  if (!data) return <ErrorLine error={error} />;
  const queues = [...new Set(data.counts.map((c) => c.queue))].sort();
  const count = (q: string, s: string) =>
    data.counts.find((c) => c.queue === q && c.status === s)?.count ?? 0;
  return (
    <div>
      <h2>Overview</h2>
      <ErrorLine error={error} />
      <section>
        <h3>Warnings</h3>
        {data.warnings.length === 0 ? (
          <p class="muted">None.</p>
        ) : (
          <ul data-testid="warnings">
            {data.warnings.map((w) => (
              <li key={w.message} class="warn">
                {w.kind}: {w.message}
              </li>
            ))}
          </ul>
        )}
      </section>
      <section>
        <h3>Jobs by queue and status</h3>
        <Table head={["queue", ...STATUSES]}>
          {queues.map((q) => (
            <tr key={q}>
              <td>{q}</td>
              {STATUSES.map((s) => (
                <td key={s}>
                  <a
                    href={
                      s === "dead_letter"
                        ? `#/dead-letter?queue=${encodeURIComponent(q)}`
                        : `#/jobs?queue=${encodeURIComponent(q)}&status=${s}`
                    }
                  >
                    {count(q, s)}
                  </a>
                </td>
              ))}
            </tr>
          ))}
        </Table>
      </section>
      <HistoryCharts queue={null} />
      <section class="cards">
        {(["1h", "24h"] as const).map((w) => (
          <div class="card" key={w} data-testid={`window-${w}`}>
            <h3>Last {w}</h3>
            <p>{data.windows[w].done} done</p>
            <p>{data.windows[w].deadLettered} dead-lettered</p>
            <p>failure rate {(data.windows[w].failureRate * 100).toFixed(1)}%</p>
          </div>
        ))}
        <div class="card">
          <h3>Dead letters by reason</h3>
          {Object.entries(data.deadLettersByReason).map(([reason, n]) => (
            <p key={reason}>
              <a href={`#/dead-letter?reason=${encodeURIComponent(reason)}`}>{reason}</a>: {n}
            </p>
          ))}
        </div>
        <div class="card">
          <h3>Remote jobs</h3>
          <p class={data.remote.frozen > 0 ? "bad" : ""}>
            <a href="#/remote?phase=frozen" data-testid="frozen-count">
              {data.remote.frozen} frozen
            </a>
            {data.remote.frozen > 0 ? ": resolve them" : ""}
          </p>
          <p>
            <a href="#/remote?phase=awaiting">{data.remote.awaiting} awaiting</a>
          </p>
          <p>
            <a href="#/remote?phase=submitting">{data.remote.submitting} submitting</a>
          </p>
        </div>
        <div class="card">
          <h3>Workers by state</h3>
          {Object.entries(data.workersByState).map(([state, n]) => (
            <p key={state}>
              {state}: {n}
            </p>
          ))}
        </div>
      </section>
      {data.waitingForWorker.length > 0 && (
        <section data-testid="waiting-for-worker">
          <h3>Waiting for a worker that can run it</h3>
          <Table head={["queue", "job", "count", "oldest", "reason"]}>
            {data.waitingForWorker.map((w) => (
              <tr key={`${w.queue}\u0000${w.name}`}>
                <td>{w.queue}</td>
                <td>
                  <a
                    href={`#/jobs?queue=${encodeURIComponent(w.queue)}&name=${encodeURIComponent(w.name)}&status=queued`}
                  >
                    {w.name}
                  </a>
                </td>
                <td>{w.count}</td>
                <td>{duration(w.oldestAgeSeconds)}</td>
                <td>{w.reason}</td>
              </tr>
            ))}
          </Table>
        </section>
      )}
      <section>
        <h3>Oldest claimable job per queue</h3>
        <Table head={["queue", "oldest due", "paused"]}>
          {data.queues.map((q) => (
            <tr key={q.name}>
              <td>{q.name}</td>
              <td>{duration(q.oldestDueAgeSeconds)}</td>
              <td>{q.paused ? "paused" : ""}</td>
            </tr>
          ))}
        </Table>
      </section>
    </div>
  );
}
