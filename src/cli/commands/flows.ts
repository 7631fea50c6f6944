/**
 * `soniq flows show <id>` (docs/workflows.md): a flow as a tree, each job with its state, through
 * `soniq.flows.get`; `--json` prints the `flow` document. No such flow exits 2 (`NOT_FOUND`); a
 * batch's id too, with `INVALID_ARGS` and a hint to `soniq batches show`.
 * `soniq flows cancel <id>`: `soniq.flows.cancel` (every job of the flow not ended: waiting and
 * queued ones cancelled, running ones asked to stop); `--json` prints the `flow-cancel` document.
 * Exit 2 with `NOT_FOUND` for an unknown id, `INVALID_ARGS` (hint: `soniq batches cancel`) for a
 * batch's.
 */
import type { Command } from "commander";
import type { FlowView } from "../../admin/flows-admin.js";
import { flowCancelJsonSchema, flowJson } from "../../admin/json/index.js";
import { SoniqError } from "../../errors.js";
import {
  type ConnectionFlags,
  connection,
  print,
  runCommand,
  withDatabaseUrl,
  withInstance,
  withJson,
  withModule,
} from "../runner.js";

/** The flow as indented lines: the root, then each job under the job that waits for it. */
export function flowTree(view: FlowView): string {
  const byId = new Map(view.jobs.map((j) => [j.id, j]));
  const lines: string[] = [];
  const seen = new Set<string>();
  const walk = (id: string, depth: number) => {
    const job = byId.get(id);
    if (!job || seen.has(id)) return;
    seen.add(id);
    const wait = job.state === "waiting" ? ` (waits for ${job.pending})` : "";
    lines.push(`${"  ".repeat(depth)}${job.id}  ${job.state}${wait}  ${job.name ?? "-"}`);
    for (const child of job.dependsOn) walk(child, depth + 1);
  };
  walk(view.id, 0);
  for (const job of view.jobs) walk(job.id, 0);
  const counts = Object.entries(view.counts)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${state} ${n}`)
    .join(", ");
  return [`flow ${view.id}  ${view.state}  (${counts})`, ...lines].join("\n");
}

/** Adds `flows show` and `flows cancel` to `program`. */
export function register(program: Command): void {
  const flows = program
    .command("flows")
    .description(
      "Workflows (jobs that wait for other jobs): show a flow's tree, or cancel a flow.",
    );
  withModule(withJson(withDatabaseUrl(flows.command("show"))))
    .description("A flow as a tree: each job with its state (waiting, queued, processing, done…).")
    .argument("<flow-id>", "the flow's id (its root job's id)")
    .argument("[module]", "your module exporting the Soniq instance")
    .action((id: string, module: string | undefined, flags: ConnectionFlags & { json?: boolean }) =>
      runCommand(() =>
        withInstance(connection(module, flags), async (soniq) => {
          const view = await soniq.flows.get(id);
          if (!view && (await soniq.flows.isBatch(id))) {
            throw new SoniqError(
              "INVALID_ARGS",
              `${id} is a batch's id, not a flow's: show it with soniq batches show ${id}`,
            );
          }
          if (!view) throw new SoniqError("NOT_FOUND", `no flow with id ${id}`);
          print(flags.json, flowJson(view), () => flowTree(view));
        }),
      ),
    );
  withModule(withJson(withDatabaseUrl(flows.command("cancel"))))
    .description(
      "Cancel every job of a flow that has not ended: waiting and queued jobs at once, running ones through their workers.",
    )
    .argument("<flow-id>", "the flow's id (its root job's id)")
    .argument("[module]", "your module exporting the Soniq instance")
    .action((id: string, module: string | undefined, flags: ConnectionFlags & { json?: boolean }) =>
      runCommand(() =>
        withInstance(connection(module, flags), async (soniq) => {
          if (await soniq.flows.isBatch(id)) {
            throw new SoniqError(
              "INVALID_ARGS",
              `${id} is a batch's id, not a flow's: cancel it with soniq batches cancel ${id}`,
            );
          }
          const done = await soniq.flows.cancel(id);
          const doc = flowCancelJsonSchema.parse({ id, ...done });
          print(
            flags.json,
            doc,
            () =>
              `flow ${id}: ${done.cancelled} cancelled, ${done.requested} running asked to stop`,
          );
        }),
      ),
    );
}
