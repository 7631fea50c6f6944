/**
 * `soniq batches show <id>` (docs/workflows.md, "Batches"): a batch's progress, callbacks and
 * members through `soniq.batches.get`; `--json` prints the `batch` document. No such batch exits
 * 2 (`NOT_FOUND`). `soniq batches cancel <id>`: `soniq.batches.cancel` (seals an open batch,
 * cancels its queued members, asks running ones to stop); `--json` prints the `batch-cancel`
 * document. Exit 2 with `NOT_FOUND` for an unknown id, `INVALID_STATE` for an open batch without
 * members.
 */
import type { Command } from "commander";
import type { BatchView } from "../../admin/batches-admin.js";
import { batchCancelJsonSchema, batchJson } from "../../admin/json/index.js";
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

/** The batch as text: its state and counts, its callbacks, then its members. */
export function batchText(view: BatchView): string {
  const c = view.counts;
  return [
    `batch ${view.id}  ${view.state}  ${c.total - c.pending}/${c.total} ended (done ${c.done}, dead ${c.dead}, cancelled ${c.cancelled}${c.gone > 0 ? `, gone ${c.gone}` : ""})`,
    ...view.callbacks.map((cb) => `  ${cb.role.padEnd(12)} ${cb.id}  ${cb.state}`),
    ...view.members.map((m) => `  member       ${m.id}  ${m.state}  ${m.name ?? "-"}`),
  ].join("\n");
}

/** Adds `batches show` and `batches cancel` to `program`. */
export function register(program: Command): void {
  const batches = program
    .command("batches")
    .description(
      "Batches (jobs with callbacks fired once when the last ends): show or cancel one.",
    );
  withModule(withJson(withDatabaseUrl(batches.command("show"))))
    .description("A batch: open, running or finished; member counts, callbacks and members.")
    .argument("<batch-id>")
    .argument("[module]", "your module exporting the Soniq instance")
    .action((id: string, module: string | undefined, flags: ConnectionFlags & { json?: boolean }) =>
      runCommand(() =>
        withInstance(connection(module, flags), async (soniq) => {
          const view = await soniq.batches.get(id);
          if (!view) throw new SoniqError("NOT_FOUND", `no batch with id ${id}`);
          print(flags.json, batchJson(view), () => batchText(view));
        }),
      ),
    );
  withModule(withJson(withDatabaseUrl(batches.command("cancel"))))
    .description(
      "Cancel a batch: seal it if open, cancel its queued members, ask running ones to stop (its callbacks then follow their rules).",
    )
    .argument("<batch-id>")
    .argument("[module]", "your module exporting the Soniq instance")
    .action((id: string, module: string | undefined, flags: ConnectionFlags & { json?: boolean }) =>
      runCommand(() =>
        withInstance(connection(module, flags), async (soniq) => {
          const done = await soniq.batches.cancel(id);
          const doc = batchCancelJsonSchema.parse({ id, ...done });
          print(
            flags.json,
            doc,
            () =>
              `batch ${id}: ${done.sealed ? "sealed, " : ""}${done.cancelled} cancelled, ${done.requested} running asked to stop`,
          );
        }),
      ),
    );
}
