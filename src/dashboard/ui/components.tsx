/**
 * Small pieces every page uses: every value is rendered as text (Preact text nodes; never
 * `innerHTML`), links are built from encoded ids only, values come as server-cut previews.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

/** A server preview of a JSON value. */
export interface PreviewData {
  json: string;
  bytes: number;
  truncated: boolean;
  hidden: boolean;
}

/** A date as local text, or a dash. */
export function When({ at }: { at: string | Date | null }) {
  if (!at) return <span class="muted">—</span>;
  return <time dateTime={new Date(at).toISOString()}>{new Date(at).toLocaleString()}</time>;
}

/**
 * A waiting job's due time (`status` `scheduled` or `queued`): `in 3h 0m 0s` with the instant, or
 * `now`; a dash for any other status.
 */
export function Due({ status, at }: { status: string; at: string }) {
  if (status !== "scheduled" && status !== "queued") return <span class="muted">—</span>;
  const seconds = (new Date(at).getTime() - Date.now()) / 1000;
  return (
    <span data-testid="due">
      {status === "scheduled"
        ? `in ${duration(Math.max(seconds, 1))} `
        : seconds < -1
          ? `${duration(-seconds)} ago `
          : "now "}
      (<When at={at} />)
    </span>
  );
}

/** A number of seconds as `1h 2m 3s`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}h ${m}m ${s % 60}s` : m > 0 ? `${m}m ${s % 60}s` : `${s}s`;
}

/** Counts down to `deadline` every second (the server's clock offset applied). */
export function Countdown({ deadline, offsetMs }: { deadline: string; offsetMs: number }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const left = (new Date(deadline).getTime() - (now + offsetMs)) / 1000;
  return (
    <span class={left <= 0 ? "bad" : "warn"} data-testid="countdown">
      {left <= 0 ? `deadline passed ${duration(-left)} ago` : `${duration(left)} to deadline`}
    </span>
  );
}

/** A status word as a badge. */
export function Badge({ word }: { word: string }) {
  return <span class={`badge badge-${word.replace(/[^a-z_]/gi, "")}`}>{word}</span>;
}

/** A JSON preview as text, with its size, the truncation notice and the download link. */
export function Value({
  value,
  download,
  label,
}: {
  value: PreviewData;
  /** Where the whole value is downloaded; none: no link (the preview is all there is). */
  download?: string;
  label: string;
}) {
  return (
    <section class="value">
      <h3>
        {label} <span class="muted">({value.bytes} bytes)</span>{" "}
        {download && (
          <a href={download} download data-testid={`download-${label.toLowerCase()}`}>
            download
          </a>
        )}
      </h3>
      {value.hidden ? (
        <p class="muted">Hidden by default.</p>
      ) : (
        <pre data-testid={`value-${label.toLowerCase()}`}>{value.json}</pre>
      )}
      {value.truncated && (
        <p class="warn" data-testid={`truncated-${label.toLowerCase()}`}>
          Truncated: showing the first {value.json.length} characters of {value.bytes} bytes.
          Download the whole value.
        </p>
      )}
    </section>
  );
}

/** A table with a header row. */
export function Table({ head, children }: { head: string[]; children: ComponentChildren }) {
  return (
    <table>
      <thead>
        <tr>
          {head.map((h) => (
            <th key={h}>{h}</th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

/** An error line. */
export function ErrorLine({ error }: { error: string | null }) {
  return error ? (
    <p class="bad" role="alert">
      {error}
    </p>
  ) : null;
}

/** A link to a job's page. */
export function jobHref(id: string, dead = false): string {
  return `#/${dead ? "dead-letter" : "jobs"}/${encodeURIComponent(id)}`;
}
