/**
 * Flows and batches as JSON (docs/workflows.md): the documents `soniq flows show --json` and
 * `soniq batches show --json` print, built from `soniq.flows.get` / `soniq.batches.get`.
 */
import { z } from "zod";
import type { BatchView } from "../batches-admin.js";
import type { FlowView } from "../flows-admin.js";

const JOB_STATES = [
  "waiting",
  "queued",
  "processing",
  "done",
  "cancelled",
  "dead",
  "gone",
] as const;

/** One job of a flow or batch. */
const flowJobJsonSchema = z.object({
  id: z.string(),
  /** Null when the job is no longer stored. */
  name: z.string().nullable(),
  state: z.enum(JOB_STATES),
  /** Dependencies not met yet. */
  pending: z.number().int(),
  /** The jobs it waits for. */
  dependsOn: z.array(z.string()),
});

/** A flow: its state, jobs per state and every job (the root first). */
export const flowJsonSchema = z.object({
  id: z.string(),
  state: z.enum(["running", "done", "failed", "cancelled", "gone"]),
  counts: z.record(z.enum(JOB_STATES), z.number().int()),
  jobs: z.array(flowJobJsonSchema),
});

/** A batch: its state, member counts, callbacks and members. */
export const batchJsonSchema = z.object({
  id: z.string(),
  state: z.enum(["open", "running", "finished"]),
  counts: z.object({
    total: z.number().int(),
    pending: z.number().int(),
    done: z.number().int(),
    dead: z.number().int(),
    cancelled: z.number().int(),
    gone: z.number().int(),
  }),
  callbacks: z.array(
    z.object({
      role: z.enum(["on_complete", "on_success", "on_failure"]),
      id: z.string(),
      state: z.enum(JOB_STATES),
    }),
  ),
  members: z.array(flowJobJsonSchema),
});

/** What `soniq flows cancel --json` prints: the flow and what its cancel did. */
export const flowCancelJsonSchema = z.object({
  id: z.string(),
  /** Jobs that were waiting or queued: cancelled now. */
  cancelled: z.number().int(),
  /** Jobs that were running: a cancel request was stored (their workers stop them). */
  requested: z.number().int(),
});

/** What `soniq batches cancel --json` prints: the batch and what its cancel did. */
export const batchCancelJsonSchema = z.object({
  id: z.string(),
  /** True when the batch was open and this cancel sealed it. */
  sealed: z.boolean(),
  /** Members that were queued: cancelled now. */
  cancelled: z.number().int(),
  /** Members that were running: a cancel request was stored. */
  requested: z.number().int(),
});

/** `view` as its JSON document. */
export function flowJson(view: FlowView): z.infer<typeof flowJsonSchema> {
  return {
    id: view.id,
    state: view.state,
    counts: { ...view.counts },
    jobs: view.jobs.map((j) => ({
      id: j.id,
      name: j.name,
      state: j.state,
      pending: j.pending,
      dependsOn: [...j.dependsOn],
    })),
  };
}

/** `view` as its JSON document. */
export function batchJson(view: BatchView): z.infer<typeof batchJsonSchema> {
  return {
    id: view.id,
    state: view.state,
    counts: { ...view.counts },
    callbacks: view.callbacks.map((c) => ({ ...c })),
    members: view.members.map((j) => ({
      id: j.id,
      name: j.name,
      state: j.state,
      pending: j.pending,
      dependsOn: [...j.dependsOn],
    })),
  };
}
