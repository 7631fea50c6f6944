/**
 * The dashboard page: loads the session (`api/me`), then shows the page the hash names. Live
 * refresh can be paused; it also pauses while the tab is hidden.
 */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, type Me, setCsrfToken } from "./api.js";
import { ErrorLine } from "./components.js";
import { live, useRoute } from "./hooks.js";
import { JobDetailPage } from "./pages/job-detail.js";
import { JobsPage } from "./pages/jobs.js";
import { OverviewPage } from "./pages/overview.js";
import { QueuesPage } from "./pages/queues.js";
import { RemotePage } from "./pages/remote.js";
import { SchedulesPage } from "./pages/schedules.js";
import { WorkersPage } from "./pages/workers.js";
import { BatchPage, FlowPage } from "./pages/workflow.js";
import "./style.css";

const NAV = [
  ["#/", "Overview"],
  ["#/jobs", "Jobs"],
  ["#/dead-letter", "Dead letters"],
  ["#/queues", "Queues"],
  ["#/workers", "Workers"],
  ["#/schedules", "Schedules"],
  ["#/remote", "Remote"],
] as const;

function Page({ me }: { me: Me }) {
  const { path, params } = useRoute();
  const parts = path.split("/").filter(Boolean);
  const [section, id] = parts;
  // Keyed by the job: another job's page starts afresh (no message of the last job's action).
  if (section === "jobs" && id)
    return <JobDetailPage key={`job ${id}`} me={me} id={decodeURIComponent(id)} dead={false} />;
  if (section === "jobs") return <JobsPage me={me} params={params} dead={false} />;
  if (section === "dead-letter" && id)
    return <JobDetailPage key={`dead ${id}`} me={me} id={decodeURIComponent(id)} dead />;
  if (section === "dead-letter") return <JobsPage me={me} params={params} dead />;
  if (section === "queues") return <QueuesPage me={me} params={params} />;
  if (section === "workers") return <WorkersPage />;
  if (section === "schedules") return <SchedulesPage me={me} />;
  if (section === "remote") return <RemotePage me={me} params={params} />;
  if (section === "flows" && id)
    return <FlowPage key={`flow ${id}`} me={me} id={decodeURIComponent(id)} />;
  if (section === "batches" && id)
    return <BatchPage key={`batch ${id}`} me={me} id={decodeURIComponent(id)} />;
  return <OverviewPage />;
}

function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [isLive, setLive] = useState(live.on);
  useEffect(() => {
    api<Me>("GET", "api/me")
      .then((m) => {
        setCsrfToken(m.csrfToken);
        setMe(m);
      })
      .catch((err: unknown) => setError(err instanceof Error ? err.message : String(err)));
  }, []);
  return (
    <>
      <header>
        <h1>Soniq</h1>
        <nav>
          {NAV.map(([href, label]) => (
            <a key={href} href={href}>
              {label}
            </a>
          ))}
        </nav>
        <label class="live">
          <input
            type="checkbox"
            checked={isLive}
            onChange={() => {
              live.on = !live.on;
              setLive(live.on);
            }}
          />{" "}
          live
        </label>
        {me && (
          <span class="user" data-testid="user">
            {me.user} {me.actions.length === 0 ? "(read-only)" : ""}
          </span>
        )}
      </header>
      <main>{me ? <Page me={me} /> : <ErrorLine error={error} />}</main>
    </>
  );
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
