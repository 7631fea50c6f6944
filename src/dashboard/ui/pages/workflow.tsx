/**
 * A flow and a batch (docs/workflows.md). The flow page draws the tree from the root — each job
 * under the job that waits for it — with each job's state and what it still waits for; a job
 * two parents wait for is drawn under the first and named under the others. The batch page shows
 * the members' progress (counts by outcome), the callbacks with whether each fired, and the
 * members. Every job links to its own page. The one write is Cancel (a flow that is running, a
 * batch that has not finished), shown to users granted `flows.cancel` / `batches.cancel`, after
 * the browser's confirmation; its answer (how many jobs were cancelled or asked to stop) is shown.
 */
import { useState } from "preact/hooks";
import type { z } from "zod";
import type {
  batchCancelJsonSchema,
  batchJsonSchema,
  flowCancelJsonSchema,
  flowJsonSchema,
} from "../../../admin/json/workflow.js";
import { api, type Me } from "../api.js";
import { Badge, ErrorLine, jobHref, Table } from "../components.js";
import { usePolled } from "../hooks.js";

type FlowDoc = z.infer<typeof flowJsonSchema>;
type BatchDoc = z.infer<typeof batchJsonSchema>;
type FlowJob = FlowDoc["jobs"][number];

/**
 * The Cancel button of a flow or batch page (while `offered`) and the answer of its last press,
 * which stays once the button goes (the flow or batch it cancelled has ended): posts to `path`
 * after `question` is confirmed, then `reload`s the page's data.
 */
function CancelAction({
  offered,
  path,
  question,
  reload,
}: {
  offered: boolean;
  path: string;
  question: string;
  reload: () => void;
}) {
  const [message, setMessage] = useState<string | null>(null);
  async function cancel() {
    if (!window.confirm(question)) return;
    try {
      const done = await api<
        z.infer<typeof flowCancelJsonSchema> | z.infer<typeof batchCancelJsonSchema>
      >("POST", path);
      setMessage(`cancel: ${done.cancelled} cancelled, ${done.requested} running asked to stop`);
      reload();
    } catch (err) {
      setMessage(`cancel: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (!offered && !message) return null;
  return (
    <div class="actions">
      {offered && (
        <button type="button" onClick={() => void cancel()}>
          Cancel
        </button>
      )}
      {message && <p role="status">{message}</p>}
    </div>
  );
}

/** A link to a job's page (its dead letter's when it is in the dead-letter queue). */
function JobLink({ job }: { job: Pick<FlowJob, "id" | "state"> }) {
  if (job.state === "gone") return <span class="mono muted">{job.id}</span>;
  return (
    <a class="mono" href={jobHref(job.id, job.state === "dead")}>
      {job.id}
    </a>
  );
}

/** One job of the tree and, below it, the jobs it waits for. */
function TreeNode({
  job,
  byId,
  drawn,
}: {
  job: FlowJob;
  byId: Map<string, FlowJob>;
  drawn: Set<string>;
}) {
  drawn.add(job.id);
  const children = job.dependsOn.map((id) => byId.get(id)).filter((j) => j !== undefined);
  return (
    <li data-testid={`flow-job-${job.id}`} data-state={job.state}>
      <span class="name">{job.name ?? "(gone)"}</span> <Badge word={job.state} />{" "}
      <JobLink job={job} />
      {job.state === "waiting" && <span class="muted"> waits for {job.pending}</span>}
      {children.length > 0 && (
        <ul class="tree">
          {children.map((child) =>
            drawn.has(child.id) ? (
              <li key={child.id} class="muted">
                also waits for <JobLink job={child} />
              </li>
            ) : (
              <TreeNode key={child.id} job={child} byId={byId} drawn={drawn} />
            ),
          )}
        </ul>
      )}
    </li>
  );
}

/** See the module comment. */
export function FlowPage({ me, id }: { me: Me; id: string }) {
  const {
    data: flow,
    error,
    reload,
  } = usePolled(() => api<FlowDoc>("GET", `api/flows/${encodeURIComponent(id)}`), [id]);
  if (!flow) return <ErrorLine error={error} />;
  const byId = new Map(flow.jobs.map((j) => [j.id, j]));
  const root = byId.get(flow.id) ?? flow.jobs[0];
  const drawn = new Set<string>();
  return (
    <div>
      <h2>
        Flow <span class="mono">{flow.id}</span>
      </h2>
      <ErrorLine error={error} />
      <p>
        <Badge word={flow.state} />{" "}
        <span data-testid="flow-counts">
          {Object.entries(flow.counts)
            .filter(([, n]) => n > 0)
            .map(([state, n]) => `${n} ${state}`)
            .join(", ")}
        </span>
      </p>
      {me.actions.includes("flows.cancel") && (
        <CancelAction
          offered={flow.state === "running"}
          path={`api/flows/${encodeURIComponent(flow.id)}/cancel`}
          question={`Cancel every job of flow ${flow.id} that has not ended?`}
          reload={reload}
        />
      )}
      <ul class="tree" data-testid="flow-tree">
        {root && <TreeNode job={root} byId={byId} drawn={drawn} />}
      </ul>
    </div>
  );
}

/** Whether a callback was released: it ran or runs; cancelled ones never did. */
function fired(state: FlowJob["state"]): string {
  if (state === "waiting") return "not yet";
  if (state === "cancelled") return "no (cancelled: its condition was not met)";
  if (state === "gone") return "—";
  return "yes";
}

const CALLBACK_LABEL = {
  on_complete: "onComplete",
  on_success: "onSuccess",
  on_failure: "onFailure",
} as const;

/** See the module comment. */
export function BatchPage({ me, id }: { me: Me; id: string }) {
  const {
    data: batch,
    error,
    reload,
  } = usePolled(() => api<BatchDoc>("GET", `api/batches/${encodeURIComponent(id)}`), [id]);
  if (!batch) return <ErrorLine error={error} />;
  const { counts } = batch;
  const ended = counts.total - counts.pending;
  return (
    <div>
      <h2>
        Batch <span class="mono">{batch.id}</span>
      </h2>
      <ErrorLine error={error} />
      <p>
        <Badge word={batch.state} /> <progress max={Math.max(counts.total, 1)} value={ended} />{" "}
        <span data-testid="batch-progress">
          {ended} of {counts.total} ended
        </span>
      </p>
      {me.actions.includes("batches.cancel") && (
        <CancelAction
          offered={batch.state !== "finished" && counts.total > 0}
          path={`api/batches/${encodeURIComponent(batch.id)}/cancel`}
          question={`Cancel batch ${batch.id}: seal it and cancel every member that has not ended?`}
          reload={reload}
        />
      )}
      <dl class="fields" data-testid="batch-counts">
        <dt>pending</dt>
        <dd data-testid="count-pending">{counts.pending}</dd>
        <dt>done</dt>
        <dd data-testid="count-done">{counts.done}</dd>
        <dt>dead</dt>
        <dd data-testid="count-dead">{counts.dead}</dd>
        <dt>cancelled</dt>
        <dd data-testid="count-cancelled">{counts.cancelled}</dd>
        <dt title="ended; the job is no longer stored (its retention passed)">gone</dt>
        <dd data-testid="count-gone">{counts.gone}</dd>
      </dl>
      <h3>Callbacks</h3>
      <Table head={["callback", "job", "state", "fired"]}>
        {batch.callbacks.map((c) => (
          <tr key={c.id} data-testid={`callback-${c.role}`}>
            <td>{CALLBACK_LABEL[c.role]}</td>
            <td>
              <JobLink job={c} />
            </td>
            <td>
              <Badge word={c.state} />
            </td>
            <td>{fired(c.state)}</td>
          </tr>
        ))}
      </Table>
      <h3>Members</h3>
      <Table head={["job", "name", "state"]}>
        {batch.members.map((m) => (
          <tr key={m.id} data-testid={`member-${m.id}`}>
            <td>
              <JobLink job={m} />
            </td>
            <td class="name">{m.name ?? "(gone)"}</td>
            <td>
              <Badge word={m.state} />
            </td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
