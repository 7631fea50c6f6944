/**
 * The jobs page (and the dead-letter list): the admin API's filters in the URL, cursor pages,
 * selection, and bulk actions on the selection or on everything matching (with the count shown
 * and sent as `expectedCount`), run by the server in batches with a live progress bar.
 */
import { useState } from "preact/hooks";
import type { OperationView as Operation } from "../../operations.js";
import type { JobSummary } from "../../views.js";
import { api, type Me, query } from "../api.js";
import { Badge, Due, ErrorLine, jobHref, Table, When } from "../components.js";
import { usePolled } from "../hooks.js";

/** How often a running bulk operation's totals are read, in milliseconds. */
const PROGRESS_POLL_MS = 200;

const JOB_FILTERS = ["status", "queue", "name", "id", "error", "dedupKey"];
const DEAD_FILTERS = ["reason", "queue", "name", "id"];

/** See the module comment. `dead` lists the dead-letter queue. */
export function JobsPage({ me, params, dead }: { me: Me; params: URLSearchParams; dead: boolean }) {
  const keys = dead ? DEAD_FILTERS : JOB_FILTERS;
  const filter: Record<string, string> = {};
  for (const k of keys) {
    const v = params.get(k);
    if (v) filter[k] = v;
  }
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [message, setMessage] = useState<string | null>(null);
  const [progress, setProgress] = useState<Operation | null>(null);
  const base = dead ? "api/dead-letter" : "api/jobs";
  const key = JSON.stringify(filter);
  const { data, error, reload } = usePolled(async () => {
    const page = await api<{
      jobs?: JobSummary[];
      deadLetters?: JobSummary[];
      nextCursor: string | null;
    }>("GET", `${base}${query({ ...filter, cursor })}`);
    return { rows: page.jobs ?? page.deadLetters ?? [], nextCursor: page.nextCursor };
  }, [key, cursor, dead]);
  const actions = dead
    ? (["replay", "delete"] as const).filter((a) => me.actions.includes(`deadLetters.${a}`))
    : (["cancel", "retry", "delete"] as const).filter((a) => me.actions.includes(`jobs.${a}`));

  async function bulk(action: string, all: boolean) {
    setMessage("working…");
    try {
      let body: Record<string, unknown> = { action, ids: [...selected] };
      if (all) {
        const count = dead
          ? undefined
          : (await api<{ count: number }>("GET", `api/jobs/count${query(filter)}`)).count;
        const what = count === undefined ? "every matching entry" : `${count} matching jobs`;
        if (!window.confirm(`${action} ${what}?`)) return setMessage(null);
        body = { action, filter, ...(count === undefined ? {} : { expectedCount: count }) };
      }
      // The server runs it in batches; its running totals are read until it has finished.
      let { operation: op } = await api<{ operation: Operation }>("POST", "api/operations", {
        target: dead ? "dead-letter" : "jobs",
        ...body,
      });
      setMessage(null);
      setProgress(op);
      while (!op.finished) {
        await new Promise((resolve) => setTimeout(resolve, PROGRESS_POLL_MS));
        op = (await api<{ operation: Operation }>("GET", `api/operations/${op.id}`)).operation;
        setProgress(op);
      }
      setMessage(
        op.error
          ? `${action} stopped: ${op.error.message}`
          : `${action}: ${op.done} of ${op.matched} done, ${op.skipped} skipped`,
      );
      setSelected(new Set());
      reload();
    } catch (err) {
      setMessage(err instanceof Error ? err.message : String(err));
    }
  }

  function onFilter(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const next: Record<string, string | undefined> = {};
    for (const k of keys) next[k] = String(form.get(k) ?? "") || undefined;
    setCursors([]);
    location.hash = `#/${dead ? "dead-letter" : "jobs"}${query(next)}`;
  }

  const rows = data?.rows ?? [];
  const toggle = (id: string) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };
  return (
    <div>
      <h2>{dead ? "Dead letters" : "Jobs"}</h2>
      <form class="filters" onSubmit={onFilter}>
        {keys.map((k) => (
          <label key={k}>
            {k} <input name={k} value={filter[k] ?? ""} />
          </label>
        ))}
        <button type="submit">Filter</button>
        {dead && (
          <a href={`api/dead-letter/export${query({ ...filter, format: "ndjson" })}`} download>
            Export NDJSON
          </a>
        )}
      </form>
      {actions.length > 0 && (
        <div class="bulk">
          {actions.map((a) => (
            <span key={a}>
              <button
                type="button"
                disabled={selected.size === 0}
                onClick={() => bulk(a, false)}
                data-testid={`bulk-${a}`}
              >
                {a} selected ({selected.size})
              </button>
              <button type="button" onClick={() => bulk(a, true)}>
                {a} all matching
              </button>
            </span>
          ))}
        </div>
      )}
      {progress && !progress.finished && (
        <p class="progress" data-testid="bulk-progress">
          <progress value={progress.done + progress.skipped} max={Math.max(progress.matched, 1)} />
          <span data-testid="bulk-progress-text">
            {progress.done + progress.skipped} of {progress.matched}
          </span>
        </p>
      )}
      {message && <p role="status">{message}</p>}
      <ErrorLine error={error} />
      <Table
        head={[
          "",
          "id",
          "name",
          "queue",
          "status",
          ...(dead ? [] : ["due"]),
          "attempts",
          "created",
          "error",
          "args",
        ]}
      >
        {rows.map((j) => (
          <tr key={j.id}>
            <td>
              <input
                type="checkbox"
                checked={selected.has(j.id)}
                onChange={() => toggle(j.id)}
                aria-label="select"
              />
            </td>
            <td>
              <a href={jobHref(j.id, dead)}>{j.id.slice(0, 8)}</a>
            </td>
            <td class="name">{j.name}</td>
            <td>{j.queue}</td>
            <td>
              <Badge word={j.reason ?? j.status} />
            </td>
            {!dead && (
              <td>
                <Due status={j.status} at={j.scheduledAt} />
              </td>
            )}
            <td>
              {j.attempts}/{j.maxAttempts}
              {j.interruptions > 0 ? ` (${j.interruptions} interrupted)` : ""}
            </td>
            <td>
              <When at={j.createdAt} />
            </td>
            <td class="error">{j.lastError?.slice(0, 200) ?? ""}</td>
            <td class="args">{j.args.hidden ? "hidden" : j.args.json.slice(0, 120)}</td>
          </tr>
        ))}
      </Table>
      <div class="pager">
        <button
          type="button"
          disabled={cursors.length === 0}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Newer
        </button>
        <button
          type="button"
          disabled={!data?.nextCursor}
          onClick={() => data?.nextCursor && setCursors([...cursors, data.nextCursor])}
        >
          Older
        </button>
      </div>
    </div>
  );
}
