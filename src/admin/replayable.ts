/**
 * Whether a dead letter may be replayed on its own (docs/workflows.md, "Replay re-arms"): a job
 * dead-lettered `dependency_failed` whose failed dependency is itself in the dead-letter queue is
 * not — it would run without that dependency's result; replaying the dependency re-arms it.
 * Shared by `soniq.deadLetters` and `soniq.jobs.retry`.
 */
import type { Backend } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";

/**
 * Refuses the replay of a dependant whose failed dependency is in the dead-letter queue (see
 * `soniq.deadLetters.replay`); `soniq.jobs.retry` of a dead letter checks the same.
 * @throws SoniqError `INVALID_STATE` with `details.dependencyId`.
 */
export async function assertReplayable(backend: Backend, id: string): Promise<void> {
  const blocking = await replayBlocker(backend, id);
  if (blocking === null) return;
  throw new SoniqError(
    "INVALID_STATE",
    `job ${id} was dead-lettered because its dependency ${blocking} failed, and ${blocking} is in the dead-letter queue: replaying this job alone would run it without that dependency's result. Replay ${blocking} instead: that puts this job back to waiting for it (nothing changed)`,
    { details: { dependencyId: blocking } },
  );
}

/**
 * For a dead letter moved `dependency_failed`: the id of a dependency whose failure moved it (an
 * edge with policy `fail` that ended dead or cancelled) and that is itself in the dead-letter
 * queue, so it can still be replayed and end well; else null (not such an entry, or every failed
 * dependency is gone or cancelled for good: then a replay runs the job, as asked).
 */
export async function replayBlocker(backend: Backend, id: string): Promise<string | null> {
  const entry = await backend.deadLetterGet({ id });
  if (entry?.reason !== "dependency_failed") return null;
  for (const dep of await backend.flows.flowDependencies({ jobId: id })) {
    if (dep.onFailure !== "fail" || dep.state === null || dep.state === "done") continue;
    if (await backend.deadLetterGet({ id: dep.id })) return dep.id;
  }
  return null;
}
