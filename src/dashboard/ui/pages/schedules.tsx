/**
 * The schedules page: every schedule with its timing (cron and zone, or interval), next instants,
 * last run and its outcome, paused or active; pause, resume and run now when granted.
 */
import { useState } from "preact/hooks";
import type { ScheduleDetailJson } from "../../../admin/json/schedule.js";
import { api, type Me } from "../api.js";
import { Badge, ErrorLine, jobHref, Table, When } from "../components.js";
import { usePolled } from "../hooks.js";

/** A schedule's timing as text. */
export function timing(s: ScheduleDetailJson): string {
  return s.cron !== null ? `cron ${s.cron} (${s.timezone})` : `every ${s.everySeconds} s`;
}

/** See the module comment. */
export function SchedulesPage({ me }: { me: Me }) {
  const { data, error, reload } = usePolled(
    () => api<{ schedules: ScheduleDetailJson[] }>("GET", "api/schedules"),
    [],
  );
  const [message, setMessage] = useState<string | null>(null);
  const canPause = me.actions.includes("schedules.pause");
  const canRun = me.actions.includes("schedules.run");
  async function run(id: string, verb: "pause" | "resume" | "run-now") {
    try {
      const r = await api<{ jobId?: string }>(
        "POST",
        `api/schedules/${encodeURIComponent(id)}/${verb}`,
      );
      setMessage(verb === "run-now" ? `${id}: enqueued job ${r.jobId ?? "?"}` : null);
      reload();
    } catch (err) {
      setMessage(err instanceof Error ? err.message : String(err));
    }
  }
  const schedules = data?.schedules ?? [];
  return (
    <div>
      <h2>Schedules</h2>
      <ErrorLine error={error} />
      {message && <p role="status">{message}</p>}
      {data && schedules.length === 0 && <p class="muted">No schedules.</p>}
      <Table head={["schedule", "job", "timing", "next runs", "last run", "outcome", "state", ""]}>
        {schedules.map((s) => {
          const last = s.runs[0];
          return (
            <tr key={s.id} data-testid="schedule-row">
              <td class="name">{s.id}</td>
              <td class="name">
                {s.jobName} <span class="muted">({s.queue})</span>
              </td>
              <td>{timing(s)}</td>
              <td>
                {s.upcoming.length === 0 ? (
                  <span class="muted">ended</span>
                ) : (
                  s.upcoming.map((at) => (
                    <div key={at}>
                      <When at={at} />
                    </div>
                  ))
                )}
              </td>
              <td>
                <When at={last?.occurrence ?? null} />
                {last?.manual ? " (manual)" : ""}
              </td>
              <td>
                {last ? <Badge word={last.outcome} /> : <span class="muted">—</span>}
                {last?.jobId && (
                  <>
                    {" "}
                    <a href={jobHref(last.jobId)}>job</a>
                  </>
                )}
              </td>
              <td data-testid="schedule-state">{s.paused ? "paused" : "active"}</td>
              <td>
                {canPause && (
                  <button type="button" onClick={() => run(s.id, s.paused ? "resume" : "pause")}>
                    {s.paused ? "Resume" : "Pause"}
                  </button>
                )}
                {canRun && (
                  <button type="button" onClick={() => run(s.id, "run-now")}>
                    Run now
                  </button>
                )}
              </td>
            </tr>
          );
        })}
      </Table>
    </div>
  );
}
