// Workflows under soniq/testing (memory mode, docs/testing.md): an inline flow runs every child,
// then its root, in one enqueue call; a batch's callback runs once after its members; a manual
// drain does the same.
import { expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { startTesting } from "../../src/testing/testing-harness.js";

it("testing › inline mode, a flow and a batch › children before the root, the callback once after the members", async () => {
  const soniq = new Soniq({ env: {} });
  const ran: string[] = [];
  const leaf = soniq.job({
    name: "t.leaf",
    handler: async (args: { n: number }) => {
      ran.push(`leaf${args.n}`);
      return args.n;
    },
  });
  const root = soniq.job({
    name: "t.root",
    handler: async (_args: object, ctx) => {
      ran.push("root");
      return (await ctx.dependencies()).reduce((s, d) => s + (d.result as number), 0);
    },
  });
  const testing = await startTesting(soniq, { mode: "inline" });
  const flow = await soniq.flow({
    job: root,
    args: {},
    children: [
      { job: leaf, args: { n: 1 } },
      { job: leaf, args: { n: 2 } },
    ],
  });
  expect(ran.at(-1)).toBe("root");
  expect((await soniq.getJob(flow.id))?.result).toBe(3);
  ran.length = 0;
  const batch = await soniq.batch({
    jobs: [{ job: leaf, args: { n: 5 } }],
    onComplete: { job: root, args: {} },
  });
  expect(ran).toEqual(["leaf5", "root"]);
  expect((await soniq.batches.get(batch.id))?.state).toBe("finished");
  await testing.stop();
  await soniq.close();
});
