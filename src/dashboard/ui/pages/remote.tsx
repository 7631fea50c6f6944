/**
 * The remote-jobs page (docs/remote-jobs.md): remote jobs by phase — frozen (an operator must act),
 * awaiting the remote side, submitting — with task id, idempotency key, polls, last change and next
 * poll; resolve a frozen job (accepted <task id> / not submitted / failed <reason>) and poll now
 * when granted.
 */
import { useState } from "preact/hooks";
import type { RemoteJobJson } from "../../../admin/json/remote-job.js";
import { api, type Me, query } from "../api.js";
import { Badge, ErrorLine, jobHref, Table, When } from "../components.js";
import { usePolled } from "../hooks.js";

const PHASES = ["frozen", "awaiting", "submitting", "all"] as const;

/** See the module comment. */
export function RemotePage({ me, params }: { me: Me; params: URLSearchParams }) {
  const phase = params.get("phase") ?? "frozen";
  const { data, error, reload } = usePolled(
    () =>
      api<{
        remoteJobs: RemoteJobJson[];
        counts: { submitting: number; awaiting: number; frozen: number };
      }>("GET", `api/remote${query({ phase })}`),
    [phase],
  );
  const [message, setMessage] = useState<string | null>(null);
  const canResolve = me.actions.includes("remote.resolve");
  const canPoll = me.actions.includes("remote.pollNow");
  async function post(id: string, verb: string, body?: unknown) {
    try {
      await api("POST", `api/remote/${encodeURIComponent(id)}/${verb}`, body);
      setMessage(`${id}: ${verb} done`);
      reload();
    } catch (err) {
      setMessage(err instanceof Error ? err.message : String(err));
    }
  }
  function resolveAccepted(id: string) {
    const taskId = window.prompt(`The provider's task id for job ${id}`);
    if (taskId) void post(id, "resolve", { resolution: "accepted", taskId });
  }
  function resolveFailed(id: string) {
    const reason = window.prompt(`Why job ${id} failed`);
    if (reason) void post(id, "resolve", { resolution: "failed", reason });
  }
  const counts = data?.counts;
  return (
    <div>
      <h2>Remote jobs</h2>
      <nav class="tabs">
        {PHASES.map((p) => (
          <a key={p} href={`#/remote?phase=${p}`} class={p === phase ? "current" : ""}>
            {p}
            {counts && p !== "all" ? ` (${counts[p]})` : ""}
          </a>
        ))}
      </nav>
      <ErrorLine error={error} />
      {message && <p role="status">{message}</p>}
      <Table
        head={[
          "job",
          "name",
          "state",
          "task id",
          "idempotency key",
          "polls",
          "last change",
          "next poll",
          "frozen",
          "",
        ]}
      >
        {(data?.remoteJobs ?? []).map((r) => (
          <tr key={r.jobId} data-testid="remote-row">
            <td>
              <a href={jobHref(r.jobId)}>{r.jobId.slice(0, 8)}</a>
            </td>
            <td class="name">{r.jobName}</td>
            <td>
              <Badge word={r.state} />
            </td>
            <td class="name">{r.taskId ?? "—"}</td>
            <td class="name">{r.idempotencyKey}</td>
            <td>{r.polls}</td>
            <td>
              <When at={r.updatedAt} />
            </td>
            <td>
              <When at={r.dueAt} />
            </td>
            <td>
              {r.frozenAt ? (
                <>
                  <When at={r.frozenAt} /> {r.frozenReason ?? ""}
                </>
              ) : (
                "—"
              )}
            </td>
            <td>
              {canResolve && r.state === "frozen" && (
                <>
                  <button type="button" onClick={() => resolveAccepted(r.jobId)}>
                    Accepted…
                  </button>
                  <button
                    type="button"
                    onClick={() => post(r.jobId, "resolve", { resolution: "not_submitted" })}
                  >
                    Not submitted
                  </button>
                  <button type="button" onClick={() => resolveFailed(r.jobId)}>
                    Failed…
                  </button>
                </>
              )}
              {canPoll && (r.state === "frozen" || r.state === "awaiting") && (
                <button type="button" onClick={() => post(r.jobId, "poll-now")}>
                  Poll now
                </button>
              )}
            </td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
