/**
 * The workers page: each incarnation with host, pid, queues, concurrency, heartbeat age, live or
 * stale, its shutdown state (RUNNING / DRAINING / FORCE_TIMEOUT_PATH / WAIT_FOR_THREAD / STOPPED),
 * drain start, a deadline countdown and its in-flight jobs.
 */
import type { WorkerJson } from "../../../admin/json/worker.js";
import { api } from "../api.js";
import { Badge, Countdown, duration, ErrorLine, jobHref, Table, When } from "../components.js";
import { usePolled } from "../hooks.js";

/** See the module comment. */
export function WorkersPage() {
  const { data, error } = usePolled(
    async () => {
      const sent = Date.now();
      const r = await api<{ workers: WorkerJson[]; now: string }>("GET", "api/workers");
      // The server's clock minus ours (half the round trip assumed each way).
      return { ...r, offsetMs: new Date(r.now).getTime() - (sent + Date.now()) / 2 };
    },
    [],
    2000,
  );
  return (
    <div>
      <h2>Workers</h2>
      <ErrorLine error={error} />
      <Table
        head={[
          "worker",
          "host / pid",
          "queues",
          "concurrency",
          "heartbeat",
          "state",
          "drain",
          "in flight",
        ]}
      >
        {(data?.workers ?? []).map((w) => (
          <tr key={w.id} data-testid="worker-row">
            <td class="mono">{w.id.slice(0, 8)}</td>
            <td>
              {w.hostname} / {w.pid}
            </td>
            <td>{w.queues?.join(", ") ?? "all"}</td>
            <td>{w.concurrency}</td>
            <td>
              {duration(w.heartbeatAgeSeconds)} ago {w.live ? "" : <Badge word="stale" />}
            </td>
            <td data-testid="shutdown-state">
              <Badge word={w.shutdownState} />
            </td>
            <td>
              {w.drainStartedAt && (
                <span>
                  since <When at={w.drainStartedAt} />{" "}
                </span>
              )}
              {w.deadlineAt && w.shutdownState !== "STOPPED" && data && (
                <Countdown deadline={String(w.deadlineAt)} offsetMs={data.offsetMs} />
              )}
            </td>
            <td>
              {w.inFlight.map((id) => (
                <a key={id} class="mono" href={jobHref(id)}>
                  {id.slice(0, 8)}{" "}
                </a>
              ))}
            </td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
