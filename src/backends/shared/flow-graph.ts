/**
 * Workflows' pure rules (docs/workflows.md): the checks and the plan of one enqueue of jobs with
 * dependencies, used by both engines' flow stores — which jobs wait, how many edges each has,
 * which dependencies lie outside the call (to look up), and refusals with a coded error.
 */
import { SoniqError } from "../../errors.js";
import type { FlowEdge, NewJob } from "../contract/index.js";

/**
 * The due time a waiting job is inserted with before its engine marks it waiting: the latest
 * instant a `runAt` may name, so no insert trigger treats it as due.
 */
export const WAITING_RUN_AT = new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999));

/** The waiting instant on SQLite (migration 015): 9999-12-31T23:59:59.999Z in milliseconds. */
export const SQLITE_WAITING_MS = 253_402_300_799_999;

/**
 * The failure policy of a batch callback's edge to one member (docs/workflows.md, "Batches"):
 * `onSuccess` is cancelled by a member that ends dead-lettered or cancelled (`cancel`); the other
 * callbacks run whatever their members' ends (`ignore`). The same for members given at creation
 * and members added to an open batch.
 * @param role - the callback node's role (`on_complete`, `on_success`, `on_failure`).
 */
export function memberEdgePolicy(role: string): "cancel" | "ignore" {
  return role === "on_success" ? "cancel" : "ignore";
}

/** What {@link flowPlan} returns. */
export interface FlowPlan {
  /** Jobs of the call that have at least one edge: inserted waiting. */
  waiting: Set<string>;
  /** Edges per waiting job. */
  edgeCount: Map<string, number>;
  /** Dependencies outside the call, each once, in first-seen order. */
  external: string[];
  /** The `UNKNOWN_DEPENDENCY` error for `ids`. */
  unknown(ids: readonly string[]): SoniqError;
}

/**
 * Checks the edges of one call and plans it.
 * @throws SoniqError `INVALID_ENQUEUE_OPTION` for an edge whose waiting job is not among `jobs`,
 * a job that waits for itself, or the same edge twice; `DEPENDENCY_CYCLE` when edges among the
 * call's jobs form a cycle (dependencies outside the call already exist, so they cannot wait for
 * a new job: a cycle can only be among the call's own jobs).
 */
export function flowPlan(params: {
  jobs: readonly NewJob[];
  edges: readonly FlowEdge[];
  seals?: readonly string[];
}): FlowPlan {
  const ids = new Set(params.jobs.map((j) => j.id));
  const seals = new Set(params.seals ?? []);
  const waiting = new Set<string>();
  const edgeCount = new Map<string, number>();
  const external: string[] = [];
  const seenExternal = new Set<string>();
  const seenEdge = new Set<string>();
  const inner = new Map<string, string[]>();
  for (const edge of params.edges) {
    if (!ids.has(edge.jobId)) {
      throw new SoniqError(
        "INVALID_ENQUEUE_OPTION",
        `edge of job ${edge.jobId}, which is not among the jobs enqueued`,
      );
    }
    if (edge.jobId === edge.dependsOn) {
      throw new SoniqError("DEPENDENCY_CYCLE", `job ${edge.jobId} would wait for itself`, {
        details: { cycle: [edge.jobId] },
      });
    }
    const key = `${edge.jobId} ${edge.dependsOn}`;
    if (seenEdge.has(key)) {
      throw new SoniqError(
        "INVALID_ENQUEUE_OPTION",
        `job ${edge.jobId} lists dependency ${edge.dependsOn} twice`,
      );
    }
    seenEdge.add(key);
    waiting.add(edge.jobId);
    edgeCount.set(edge.jobId, (edgeCount.get(edge.jobId) ?? 0) + 1);
    if (seals.has(edge.dependsOn)) {
      // A batch's seal edge: met when the batch is sealed, never looked up.
    } else if (ids.has(edge.dependsOn)) {
      const list = inner.get(edge.jobId) ?? [];
      list.push(edge.dependsOn);
      inner.set(edge.jobId, list);
    } else if (!seenExternal.has(edge.dependsOn)) {
      seenExternal.add(edge.dependsOn);
      external.push(edge.dependsOn);
    }
  }
  const cycle = findCycle(inner);
  if (cycle) {
    throw new SoniqError("DEPENDENCY_CYCLE", `dependencies form a cycle: ${cycle.join(" → ")}`, {
      details: { cycle },
    });
  }
  return {
    waiting,
    edgeCount,
    external,
    unknown: (unknownIds) =>
      new SoniqError(
        "UNKNOWN_DEPENDENCY",
        `no such job to depend on: ${unknownIds.join(", ")} (never enqueued, or finished and no longer kept); nothing was enqueued`,
        { details: { ids: [...unknownIds] } },
      ),
  };
}

/** A cycle in `graph` (job → the jobs it waits for) as a path that starts and ends on one job. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  for (const start of graph.keys()) {
    if (state.has(start)) continue;
    // Iterative depth-first search (a flow may be thousands of jobs deep).
    const path: string[] = [];
    const stack: Array<{ id: string; next: number }> = [{ id: start, next: 0 }];
    state.set(start, "open");
    path.push(start);
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as { id: string; next: number };
      const out = graph.get(top.id) ?? [];
      if (top.next >= out.length) {
        state.set(top.id, "done");
        stack.pop();
        path.pop();
        continue;
      }
      const to = out[top.next] as string;
      top.next += 1;
      const seen = state.get(to);
      if (seen === "open") return [...path.slice(path.indexOf(to)), to];
      if (seen === undefined) {
        state.set(to, "open");
        path.push(to);
        stack.push({ id: to, next: 0 });
      }
    }
  }
  return undefined;
}
