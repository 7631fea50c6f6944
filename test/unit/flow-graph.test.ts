// Workflows' pure rules (src/backends/shared/flow-graph.ts, src/jobs/flow.ts): which jobs wait,
// the dependencies to look up, and the refusals (cycles, self-waits, repeated edges, bad trees).
import { describe, expect, it } from "vitest";
import type { NewJob } from "../../src/backends/contract/index.js";
import { flowPlan } from "../../src/backends/shared/flow-graph.js";
import type { SoniqError } from "../../src/errors.js";
import { flattenFlow } from "../../src/jobs/flow.js";

const job = (id: string) => ({ id }) as NewJob;
const edge = (jobId: string, dependsOn: string) => ({
  jobId,
  dependsOn,
  onFailure: "fail" as const,
});

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as SoniqError).code;
  }
  return undefined;
}

describe("flowPlan", () => {
  it("plan › edges inside and outside the call › waiting jobs, counts and outside ids once", () => {
    const plan = flowPlan({
      jobs: [job("a"), job("b"), job("c")],
      edges: [edge("c", "a"), edge("c", "x"), edge("b", "x")],
    });
    expect([...plan.waiting].sort()).toEqual(["b", "c"]);
    expect(plan.edgeCount.get("c")).toBe(2);
    expect(plan.external).toEqual(["x"]);
    expect(plan.unknown(["x"]).code).toBe("UNKNOWN_DEPENDENCY");
  });

  it("refusals › cycle, self-wait, repeated edge, foreign waiting job › coded errors", () => {
    const jobs = [job("a"), job("b"), job("c")];
    expect(
      codeOf(() => flowPlan({ jobs, edges: [edge("a", "b"), edge("b", "c"), edge("c", "a")] })),
    ).toBe("DEPENDENCY_CYCLE");
    expect(codeOf(() => flowPlan({ jobs, edges: [edge("a", "a")] }))).toBe("DEPENDENCY_CYCLE");
    expect(codeOf(() => flowPlan({ jobs, edges: [edge("a", "b"), edge("a", "b")] }))).toBe(
      "INVALID_ENQUEUE_OPTION",
    );
    expect(codeOf(() => flowPlan({ jobs, edges: [edge("z", "a")] }))).toBe(
      "INVALID_ENQUEUE_OPTION",
    );
  });

  it("cycle › a chain 5,000 deep closed on itself › found without overflowing the stack", () => {
    const ids = Array.from({ length: 5000 }, (_, i) => `j${i}`);
    const edges = ids.map((id, i) => edge(id, ids[(i + 1) % ids.length] as string));
    expect(codeOf(() => flowPlan({ jobs: ids.map(job), edges }))).toBe("DEPENDENCY_CYCLE");
  });
});

describe("flattenFlow", () => {
  it("tree › root with nested children › breadth-first items, edges parent → child with policies", () => {
    const flat = flattenFlow(
      {
        job: "r.root",
        args: 0,
        children: [
          {
            job: { name: "r.mid" },
            args: 1,
            onFailure: "ignore",
            children: [{ job: "r.leaf", args: 3 }],
          },
          { job: "r.leaf", args: 2 },
        ],
      },
      { onFailure: "cancel" },
    );
    expect(flat.items.map((i) => i.name)).toEqual(["r.root", "r.mid", "r.leaf", "r.leaf"]);
    expect(flat.edges).toEqual([
      { from: 0, to: 1, onFailure: "ignore" },
      { from: 0, to: 2, onFailure: "cancel" },
      { from: 1, to: 3, onFailure: "cancel" },
    ]);
  });

  it("bad trees › no job, bad policy, children not a list › INVALID_ENQUEUE_OPTION", () => {
    expect(codeOf(() => flattenFlow({ args: 1 } as never))).toBe("INVALID_ENQUEUE_OPTION");
    expect(codeOf(() => flattenFlow({ job: "a", args: 1, onFailure: "x" as never }))).toBe(
      "INVALID_ENQUEUE_OPTION",
    );
    expect(codeOf(() => flattenFlow({ job: "a", args: 1, children: {} as never }))).toBe(
      "INVALID_ENQUEUE_OPTION",
    );
  });
});
