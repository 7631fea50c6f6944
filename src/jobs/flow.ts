/**
 * `soniq.flow()`'s tree (docs/workflows.md): a job and the children it waits for, flattened into
 * the items and edges one enqueue writes. Pure: validation and shape only.
 */
import type { DependencyFailurePolicy, PgQueryable } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import { refuseUnknownKeys } from "./batch.js";
import type { EnqueueOptions } from "./enqueue-options.js";

/** The most jobs one flow may hold. */
export const MAX_FLOW_JOBS = 10_000;

/** One job of a flow tree. */
export interface FlowSpec {
  /** The job: its definition (anything with a `name`, e.g. what `soniq.job()` returned), or its name. */
  job: { readonly name: string } | string;
  /** Its arguments. */
  args: unknown;
  /**
   * Its enqueue options: `delay`, `runAt` (applied from its release, counted from the enqueue),
   * `priority`, `queue`, `maxAttempts`, `concurrencyKey`. Not `after`, dedup keys or `connection`.
   */
  options?: Omit<EnqueueOptions, "after" | "onDependencyFailure" | "connection">;
  /** The jobs this one waits for: it runs after every child ended well. */
  children?: readonly FlowSpec[];
  /**
   * What this job's failed end (dead-lettered or cancelled) does to its parent, overriding the
   * flow's `onFailure`.
   */
  onFailure?: DependencyFailurePolicy;
}

/** Options of `soniq.flow()`. */
export interface FlowOptions {
  /**
   * The default policy of every edge (what a child that ends dead-lettered or cancelled does to
   * its parent): `"fail"` (default: the parent is dead-lettered, reason `dependency_failed`),
   * `"ignore"`, or `"cancel"` (the parent is cancelled — and its parent in turn, so the rest of
   * the flow is cancelled when every edge says so).
   */
  onFailure?: DependencyFailurePolicy;
  /** PostgreSQL only: the caller's transaction client; the flow exists iff it commits. */
  connection?: PgQueryable;
}

/** A flow flattened: items in breadth-first order (the root first) and edges by index. */
export interface FlatFlow {
  items: Array<{ name: string; args: unknown; options: EnqueueOptions }>;
  edges: Array<{ from: number; to: number; onFailure: DependencyFailurePolicy }>;
}

function bad(message: string): SoniqError {
  return new SoniqError("INVALID_ENQUEUE_OPTION", message);
}

const POLICIES = new Set(["fail", "ignore", "cancel"]);
/** The keys a {@link FlowSpec} node may have. */
const NODE_KEYS = new Set(["job", "args", "options", "children", "onFailure"]);

/**
 * Flattens `root` breadth-first.
 * @throws SoniqError `INVALID_ENQUEUE_OPTION` for a node without a job, an unknown key, a bad
 * policy, children that are not a list, or more than {@link MAX_FLOW_JOBS} jobs.
 */
export function flattenFlow(root: FlowSpec, options: FlowOptions = {}): FlatFlow {
  const fallback = options.onFailure ?? "fail";
  if (!POLICIES.has(fallback)) throw bad(`onFailure must be "fail", "ignore" or "cancel"`);
  const items: FlatFlow["items"] = [];
  const edges: FlatFlow["edges"] = [];
  const queue: Array<{ spec: FlowSpec; parent: number | null; path: string }> = [
    { spec: root, parent: null, path: "flow" },
  ];
  for (let head = 0; head < queue.length; head += 1) {
    const { spec, parent, path } = queue[head] as (typeof queue)[number];
    if (spec === null || typeof spec !== "object") throw bad(`${path} must be an object`);
    refuseUnknownKeys(spec, NODE_KEYS, path);
    const name = typeof spec.job === "string" ? spec.job : spec.job?.name;
    if (typeof name !== "string") throw bad(`${path}.job must be a job definition or a job name`);
    if (spec.onFailure !== undefined && !POLICIES.has(spec.onFailure)) {
      throw bad(`${path}.onFailure must be "fail", "ignore" or "cancel"`);
    }
    const index = items.length;
    items.push({ name, args: spec.args, options: { ...(spec.options ?? {}) } });
    if (items.length > MAX_FLOW_JOBS) throw bad(`a flow holds at most ${MAX_FLOW_JOBS} jobs`);
    if (parent !== null) {
      edges.push({ from: parent, to: index, onFailure: spec.onFailure ?? fallback });
    }
    if (spec.children !== undefined) {
      if (!Array.isArray(spec.children)) throw bad(`${path}.children must be a list`);
      spec.children.forEach((child, i) => {
        queue.push({ spec: child, parent: index, path: `${path}.children[${i}]` });
      });
    }
  }
  return { items, edges };
}
