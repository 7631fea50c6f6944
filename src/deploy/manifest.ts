/**
 * Reads a deployment manifest — Kubernetes YAML, a Compose file or a systemd unit — into the
 * facts the deploy budget needs for each Soniq worker it runs: the supervisor's grace period
 * (`terminationGracePeriodSeconds`, `stop_grace_period`, `TimeoutStopSec`, with each one's default
 * when absent), the preStop time, and the `SONIQ_*` variables and `soniq worker` flags it sets.
 * Pure apart from its input text: no I/O.
 */
import { parseAllDocuments } from "yaml";
import { SoniqError } from "../errors.js";

/** What kind of manifest it is. */
export type ManifestKind = "kubernetes" | "compose" | "systemd";

/** One worker a manifest runs. */
export interface ManifestWorker {
  kind: ManifestKind;
  /** Which workload, e.g. `Deployment soniq-worker (container worker)`. */
  label: string;
  /** The supervisor's grace before SIGKILL, in seconds. */
  graceSeconds: number;
  /** The field it came from, e.g. `terminationGracePeriodSeconds`, with `(default)` when absent. */
  graceSource: string;
  /** Seconds a preStop hook sleeps before SIGTERM (0 when none or unknown). */
  preStopSeconds: number;
  /** Literal `SONIQ_*` values it sets (values from secrets are left out). */
  env: Record<string, string>;
  /** `--shutdown-timeout` given on the worker's command line, in seconds. */
  shutdownTimeoutFlag?: number;
  /** Problems worth a note (an httpGet preStop whose length cannot be known, …). */
  notes: string[];
}

/**
 * The workers `text` runs. `name` (a file name) helps tell a systemd unit from YAML.
 * @throws SoniqError `INVALID_OPTION` when the text is none of the three kinds, or runs nothing.
 */
export function readManifest(text: string, name = ""): ManifestWorker[] {
  const systemd = /\.(service|conf)$/.test(name) || /^\s*\[Service\]\s*$/m.test(text);
  const workers = systemd ? readSystemd(text) : readYaml(text, name);
  if (workers.length === 0) {
    throw new SoniqError(
      "INVALID_OPTION",
      `${name || "the manifest"}: no worker found (a Kubernetes workload, a Compose service or a systemd [Service])`,
    );
  }
  return workers;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.map(String) : typeof v === "string" ? v.split(/\s+/).filter(Boolean) : [];

function readYaml(text: string, name: string): ManifestWorker[] {
  const documents = parseAllDocuments(text);
  const out: ManifestWorker[] = [];
  for (const document of Array.isArray(documents) ? documents : [documents]) {
    if (document.errors.length > 0) {
      throw new SoniqError(
        "INVALID_OPTION",
        `${name || "the manifest"}: not valid YAML: ${document.errors[0]?.message}`,
      );
    }
    const root: unknown = document.toJS();
    if (!isObj(root)) continue;
    if (isObj(root.services)) out.push(...readCompose(root.services));
    else if (typeof root.kind === "string") out.push(...readKubernetes(root));
  }
  return out;
}

/** Kubernetes' default `terminationGracePeriodSeconds`. */
const KUBERNETES_DEFAULT_GRACE = 30;

function podSpec(root: Obj): Json | undefined {
  const spec = root.spec;
  if (!isObj(spec)) return undefined;
  if (root.kind === "Pod") return spec;
  if (root.kind === "CronJob") {
    const job = spec.jobTemplate;
    return isObj(job) && isObj(job.spec) && isObj(job.spec.template)
      ? job.spec.template.spec
      : undefined;
  }
  return isObj(spec.template) ? spec.template.spec : undefined;
}

function readKubernetes(root: Obj): ManifestWorker[] {
  const pod = podSpec(root);
  if (!isObj(pod) || !Array.isArray(pod.containers)) return [];
  const containers = pod.containers.filter(isObj);
  const soniq = containers.filter((c) =>
    mentionsSoniq([...strings(c.command), ...strings(c.args)]),
  );
  const chosen = soniq.length > 0 ? soniq : containers.slice(0, 1);
  const given = pod.terminationGracePeriodSeconds;
  const metadata = isObj(root.metadata) ? root.metadata : {};
  return chosen.map((container) => {
    const notes: string[] = [];
    const command = [...strings(container.command), ...strings(container.args)];
    const env: Record<string, string> = {};
    for (const item of Array.isArray(container.env) ? container.env.filter(isObj) : []) {
      if (
        typeof item.name === "string" &&
        item.name.startsWith("SONIQ_") &&
        item.value !== undefined &&
        item.value !== null
      ) {
        env[item.name] = String(item.value);
      }
    }
    let preStopSeconds = 0;
    const lifecycle = isObj(container.lifecycle) ? container.lifecycle : {};
    const preStop = isObj(lifecycle.preStop) ? lifecycle.preStop : undefined;
    if (preStop) {
      if (isObj(preStop.sleep) && typeof preStop.sleep.seconds === "number")
        preStopSeconds = preStop.sleep.seconds;
      else if (isObj(preStop.exec)) {
        const found = sleepSeconds(strings(preStop.exec.command).join(" "));
        if (found === undefined) notes.push("preStop exec hook of unknown length: counted as 0 s");
        else preStopSeconds = found;
      } else notes.push("preStop hook of unknown length (httpGet?): counted as 0 s");
    }
    return {
      kind: "kubernetes" as const,
      label: `${String(root.kind)} ${String(metadata.name ?? "?")} (container ${String(container.name ?? "?")})`,
      graceSeconds: typeof given === "number" ? given : KUBERNETES_DEFAULT_GRACE,
      graceSource:
        typeof given === "number"
          ? "terminationGracePeriodSeconds"
          : "terminationGracePeriodSeconds (default)",
      preStopSeconds,
      env,
      ...flagOf(command),
      notes,
    };
  });
}

/** Compose's default `stop_grace_period`. */
const COMPOSE_DEFAULT_GRACE = 10;

function readCompose(services: Obj): ManifestWorker[] {
  const entries = Object.entries(services).filter((e): e is [string, Obj] => isObj(e[1]));
  const soniq = entries.filter(([, s]) =>
    mentionsSoniq([...strings(s.command), ...strings(s.entrypoint)]),
  );
  return (soniq.length > 0 ? soniq : entries).map(([name, service]) => {
    const env: Record<string, string> = {};
    const environment = service.environment;
    if (Array.isArray(environment)) {
      for (const item of environment.map(String)) {
        const at = item.indexOf("=");
        if (at > 0 && item.startsWith("SONIQ_")) env[item.slice(0, at)] = item.slice(at + 1);
      }
    } else if (isObj(environment)) {
      for (const [key, value] of Object.entries(environment)) {
        if (key.startsWith("SONIQ_") && value !== null) env[key] = String(value);
      }
    }
    const given = service.stop_grace_period;
    return {
      kind: "compose" as const,
      label: `service ${name}`,
      graceSeconds:
        given === undefined || given === null
          ? COMPOSE_DEFAULT_GRACE
          : parseDuration(String(given), "stop_grace_period"),
      graceSource:
        given === undefined || given === null ? "stop_grace_period (default)" : "stop_grace_period",
      preStopSeconds: 0,
      env,
      ...flagOf([...strings(service.entrypoint), ...strings(service.command)]),
      notes: [],
    };
  });
}

/** systemd's default `TimeoutStopSec` (`DefaultTimeoutStopSec`). */
const SYSTEMD_DEFAULT_GRACE = 90;

function readSystemd(text: string): ManifestWorker[] {
  let section = "";
  const values = new Map<string, string>();
  const env: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1] as string;
      continue;
    }
    if (section !== "Service") continue;
    const at = line.indexOf("=");
    if (at < 0) continue;
    const key = line.slice(0, at).trim();
    const value = line.slice(at + 1).trim();
    if (key === "Environment") {
      for (const match of value.matchAll(/"([^"]*)"|(\S+)/g)) {
        const assignment = match[1] ?? match[2] ?? "";
        const eq = assignment.indexOf("=");
        if (eq > 0 && assignment.startsWith("SONIQ_"))
          env[assignment.slice(0, eq)] = assignment.slice(eq + 1);
      }
    } else values.set(key, value);
  }
  if (section === "" && values.size === 0) return [];
  const given = values.get("TimeoutStopSec") ?? values.get("TimeoutSec");
  const source = values.has("TimeoutStopSec")
    ? "TimeoutStopSec"
    : values.has("TimeoutSec")
      ? "TimeoutSec"
      : "TimeoutStopSec (default)";
  return [
    {
      kind: "systemd",
      label: "[Service]",
      graceSeconds: given === undefined ? SYSTEMD_DEFAULT_GRACE : parseDuration(given, source),
      graceSource: source,
      preStopSeconds: 0,
      env,
      ...flagOf((values.get("ExecStart") ?? "").split(/\s+/)),
      notes: [],
    },
  ];
}

function mentionsSoniq(command: string[]): boolean {
  return command.some((part) => /soniq/.test(part));
}

function sleepSeconds(command: string): number | undefined {
  const match = /(?:^|[\s;&|"'])sleep\s+(\d+(?:\.\d+)?)s?(?:$|[\s;&|"'])/.exec(command);
  return match ? Number(match[1]) : undefined;
}

function flagOf(command: string[]): { shutdownTimeoutFlag?: number } {
  for (let i = 0; i < command.length; i += 1) {
    const part = command[i] as string;
    const value = part.startsWith("--shutdown-timeout=")
      ? part.split("=")[1]
      : part === "--shutdown-timeout"
        ? command[i + 1]
        : undefined;
    if (value !== undefined && Number.isFinite(Number(value)))
      return { shutdownTimeoutFlag: Number(value) };
  }
  return {};
}

const UNITS: Record<string, number> = {
  us: 1e-6,
  ms: 0.001,
  s: 1,
  sec: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hour: 3600,
  hours: 3600,
  d: 86_400,
  day: 86_400,
  days: 86_400,
};

/**
 * A duration in seconds: a plain number (seconds), or units as Compose (`1m30s`) and systemd
 * (`1min 30s`) write them. `infinity` is `Infinity`.
 * @throws SoniqError `INVALID_OPTION` naming `field` when the text is not a duration.
 */
export function parseDuration(text: string, field: string): number {
  const trimmed = text.trim();
  if (trimmed === "infinity") return Number.POSITIVE_INFINITY;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  let total = 0;
  let rest = trimmed;
  const part = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)/;
  while (rest.length > 0) {
    const match = part.exec(rest);
    const unit = match ? UNITS[match[2] as string] : undefined;
    if (!match || unit === undefined) {
      throw new SoniqError("INVALID_OPTION", `${field}: ${JSON.stringify(text)} is not a duration`);
    }
    total += Number(match[1]) * unit;
    rest = rest.slice(match[0].length).trim();
  }
  return total;
}
