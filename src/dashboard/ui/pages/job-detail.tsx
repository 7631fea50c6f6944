/**
 * One job (or dead letter): its fields, progress, arguments and result as server-cut previews with
 * download links, its checkpoint and durable steps (a frozen step with the operator's answers),
 * the timeline (NACKs, recoveries, retries, cancel requests, dead-letter moves, the last
 * checkpoint, steps), the flow or batch it belongs to (a link to its page), and the actions the
 * user's access grants.
 */
import { useState } from "preact/hooks";
import type { JobDetailView } from "../../views.js";
import { api, type Me } from "../api.js";
import { Badge, Due, ErrorLine, Table, Value, When } from "../components.js";
import { usePolled } from "../hooks.js";

/** See the module comment. */
export function JobDetailPage({ me, id, dead }: { me: Me; id: string; dead: boolean }) {
  const [showArgs, setShowArgs] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const base = `${dead ? "api/dead-letter" : "api/jobs"}/${encodeURIComponent(id)}`;
  const {
    data: job,
    error,
    reload,
  } = usePolled(
    () => api<JobDetailView>("GET", `${base}${showArgs ? "?showArgs=1" : ""}`),
    [id, dead, showArgs],
  );
  const { data: workflow } = usePolled(
    () =>
      api<{ flow: string | null; batch: string | null }>(
        "GET",
        `api/jobs/${encodeURIComponent(id)}/workflow`,
      ),
    [id],
    30_000,
  );
  async function act(method: string, path: string, label: string, body?: unknown) {
    try {
      await api(method, path, body);
      setMessage(`${label}: ok`);
      if (method === "DELETE") location.hash = dead ? "#/dead-letter" : "#/jobs";
      else reload();
    } catch (err) {
      setMessage(`${label}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (!job) return <ErrorLine error={error} />;
  const can = (a: string) => me.actions.includes(a);
  /** "It happened": asks for the step's result (JSON; empty for none). */
  function resolveDone(step: string) {
    const text = window.prompt(`The result of step "${step}" as JSON (empty: no result)`, "");
    if (text === null) return;
    let result: unknown;
    try {
      result = text.trim() === "" ? undefined : JSON.parse(text);
    } catch {
      setMessage(`resolve ${step}: the result is not JSON`);
      return;
    }
    void act("POST", `${base}/resolve-step`, `resolve ${step} (done)`, {
      step,
      answer: "done",
      ...(result === undefined ? {} : { result }),
    });
  }
  const waiting = job.status === "queued" || job.status === "scheduled";
  return (
    <div>
      <h2>
        {dead ? "Dead letter" : "Job"} <span class="mono">{job.id}</span>
      </h2>
      <ErrorLine error={error} />
      <div class="actions">
        {!dead &&
          can("jobs.cancel") &&
          (job.status === "queued" ||
            job.status === "scheduled" ||
            job.status === "processing") && (
            <button type="button" onClick={() => act("POST", `${base}/cancel`, "cancel")}>
              Cancel
            </button>
          )}
        {!dead && can("jobs.retry") && job.status !== "processing" && (
          <button type="button" onClick={() => act("POST", `${base}/retry`, "retry")}>
            {job.status === "queued" || job.status === "scheduled" ? "Run now" : "Retry"}
          </button>
        )}
        {!dead && can("jobs.clearCheckpoint") && waiting && job.checkpoint && (
          <button
            type="button"
            onClick={() => act("POST", `${base}/clear-checkpoint`, "clear checkpoint")}
          >
            Clear checkpoint
          </button>
        )}
        {dead && can("deadLetters.replay") && (
          <button type="button" onClick={() => act("POST", `${base}/replay`, "replay")}>
            Replay
          </button>
        )}
        {((dead && can("deadLetters.delete")) ||
          (!dead && can("jobs.delete") && job.status !== "processing")) && (
          <button type="button" class="danger" onClick={() => act("DELETE", base, "delete")}>
            Delete
          </button>
        )}
      </div>
      {message && <p role="status">{message}</p>}
      <dl class="fields">
        <dt>name</dt>
        <dd class="name">{job.name}</dd>
        <dt>version</dt>
        <dd data-testid="version">{job.version}</dd>
        <dt>queue</dt>
        <dd>{job.queue}</dd>
        <dt>status</dt>
        <dd>
          <Badge word={job.status} /> {job.reason ? `(${job.reason})` : ""}
          {job.cancelRequestedAt ? " cancel requested" : ""}
        </dd>
        {!dead && (job.status === "scheduled" || job.status === "queued") && (
          <>
            <dt>due</dt>
            <dd>
              <Due status={job.status} at={job.scheduledAt} />
            </dd>
          </>
        )}
        {workflow?.flow && (
          <>
            <dt>flow</dt>
            <dd>
              <a
                class="mono"
                data-testid="flow-link"
                href={`#/flows/${encodeURIComponent(workflow.flow)}`}
              >
                {workflow.flow}
              </a>
            </dd>
          </>
        )}
        {workflow?.batch && (
          <>
            <dt>batch</dt>
            <dd>
              <a
                class="mono"
                data-testid="batch-link"
                href={`#/batches/${encodeURIComponent(workflow.batch)}`}
              >
                {workflow.batch}
              </a>
            </dd>
          </>
        )}
        <dt>attempts</dt>
        <dd data-testid="attempts">
          {job.attempts} of {job.maxAttempts}; {job.interruptions} interruption(s)
        </dd>
        <dt>worker</dt>
        <dd class="mono">{job.workerId ?? "—"}</dd>
        <dt>created</dt>
        <dd>
          <When at={job.createdAt} />
        </dd>
        <dt>scheduled</dt>
        <dd>
          <When at={job.scheduledAt} />
        </dd>
        {job.progress && job.status === "processing" && (
          <>
            <dt>progress</dt>
            <dd>
              <progress max={1} value={job.progress.fraction} />{" "}
              {(job.progress.fraction * 100).toFixed(0)}% {job.progress.message ?? ""}
            </dd>
          </>
        )}
        {job.progress && job.status !== "processing" && (
          <>
            <dt>last progress</dt>
            <dd data-testid="last-progress">
              {(job.progress.fraction * 100).toFixed(0)}% {job.progress.message ?? ""} (reported
              before it became {job.status}; not live)
            </dd>
          </>
        )}
        <dt>last error</dt>
        <dd>
          <pre class="error" data-testid="last-error">
            {job.lastError ?? "—"}
          </pre>
        </dd>
      </dl>
      {job.args.hidden && (
        <button type="button" onClick={() => setShowArgs(true)}>
          Show arguments
        </button>
      )}
      <Value value={job.args} download={`${base}/args`} label="Arguments" />
      {!dead && <Value value={job.result} download={`${base}/result`} label="Result" />}
      {job.checkpoint && (
        <>
          <h3>Checkpoint</h3>
          <p data-testid="checkpoint">
            {job.checkpoint.count} written; last{" "}
            {job.checkpoint.at ? <When at={job.checkpoint.at} /> : "—"}; {job.checkpoint.bytes}{" "}
            bytes
          </p>
          <Value value={job.checkpoint.value} label="State" />
        </>
      )}
      {job.steps.length > 0 && (
        <>
          <h3>Steps</h3>
          <Table head={["step", "state", "at", ""]}>
            {job.steps.map((st) => (
              <tr key={st.name} data-testid={`step-${st.name}`}>
                <td class="mono">{st.name}</td>
                <td>
                  <Badge word={st.state} />
                </td>
                <td>{st.at ? <When at={st.at} /> : ""}</td>
                <td>
                  {st.state === "frozen" && waiting && can("jobs.resolveStep") && (
                    <span class="actions">
                      <button type="button" onClick={() => resolveDone(st.name)}>
                        It happened
                      </button>
                      <button
                        type="button"
                        onClick={() =>
                          act("POST", `${base}/resolve-step`, `resolve ${st.name} (rerun)`, {
                            step: st.name,
                            answer: "rerun",
                          })
                        }
                      >
                        Run it again
                      </button>
                    </span>
                  )}
                  {st.state === "frozen" && !can("jobs.resolveStep") && (
                    <span>outcome unknown: waiting for an operator's answer</span>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        </>
      )}
      <h3>Timeline</h3>
      <Table head={["at", "event", "attempt", "worker", "detail"]}>
        {job.timeline.map((e, i) => (
          <tr key={`${i}-${e.kind}`} data-testid={`timeline-${e.kind}`}>
            <td>
              <When at={e.at} />
            </td>
            <td>
              <Badge word={e.kind} />
            </td>
            <td>{e.attempt ?? ""}</td>
            <td class="mono">{e.workerId ?? ""}</td>
            <td class="error">{e.detail ?? ""}</td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
