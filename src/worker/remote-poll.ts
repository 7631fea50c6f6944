/**
 * One poll (or reconcile) of a remote job in custody, run on any worker that claimed it through
 * `pollClaimDue` (docs/remote-jobs.md, "The phases": any worker polls): a stored callback or
 * operator answer is applied first; an `accepted` task is polled by its durable task id
 * (`pending` → due again, not an attempt; `done` → job done; `failed` → kept as the job's error;
 * past `pollTimeout` → dead-lettered `remote_timeout`); a `frozen` one is reconciled
 * (`accepted(taskId)` → polling; `notSubmitted()` → released with the same idempotency key).
 * A poll cut off by the shutdown deadline (after the settle window) is handed off: owner cleared,
 * due now, on any worker. Polls never consult the circuit breaker.
 */

import { idempotencyKey } from "../backends/contract/phases.js";
import type { ClaimedRemote } from "../backends/contract/submission-store.js";
import type { JobDefinition } from "../jobs/job-definition.js";
import { dispositionOf } from "../remote/dispositions.js";
import type { RemotePollContext, RemoteSpec } from "../remote/remote-job.js";
import { checkPollResult, checkReconcileResult } from "../remote/results.js";
import type { InFlight } from "./in-flight.js";
import { boundedCall } from "./remote-call.js";
import { type RemoteDeps, RemoteOutcomes, remoteLogger } from "./remote-outcomes.js";
import { submitContext } from "./remote-submit.js";

type Definition = JobDefinition<unknown, unknown, unknown>;

/** Seconds before a reconcile that threw or gave no usable answer is tried again. */
export const RECONCILE_RETRY_SECONDS = 30;

/** See the module comment. */
export class RemotePollRunner {
  private readonly outcomes: RemoteOutcomes;

  constructor(private readonly deps: RemoteDeps) {
    this.outcomes = new RemoteOutcomes(deps);
  }

  /** Frees a row this worker holds after an unexpected error of ours (never requeued blindly). */
  rescue(entry: InFlight): Promise<void> {
    return this.outcomes.rescueUnexpected(entry.job, entry.owner);
  }

  /**
   * Runs one poll/reconcile to a durable state. `args` are the validated arguments (for
   * `reconcile`), or undefined when they could not be read. Never rejects.
   */
  async run(
    entry: InFlight,
    claimed: ClaimedRemote,
    definition: Definition,
    args: unknown,
  ): Promise<void> {
    const { job, owner } = entry;
    const spec = definition.remote as RemoteSpec;
    const { backend, machine, settleSeconds } = this.deps;
    const log = remoteLogger(this.deps, job.id);
    const taskId = claimed.taskId;
    const release = (delaySeconds: number, countPoll: boolean) =>
      this.outcomes.write("poll release", job.id, () =>
        backend.submissions.pollRelease({ jobId: job.id, owner, delaySeconds, countPoll }),
      );

    if (claimed.answer) {
      const answer = claimed.answer;
      if (answer.kind === "done") {
        const result = answer.result === null ? null : (JSON.parse(answer.result) as unknown);
        await this.outcomes.complete(job, owner, result, definition, log, taskId);
      } else {
        await this.outcomes.fail(
          job,
          owner,
          { kind: "failed", error: answer.error, retry: answer.retry },
          definition,
          log,
          taskId,
        );
      }
      return;
    }

    if (claimed.phase === "frozen") {
      const reconcile = spec.reconcile;
      if (!reconcile) {
        await release(3600, false);
        return;
      }
      const ctx = submitContext(entry, this.deps, claimed.generation);
      const started = performance.now();
      const end = await boundedCall(
        () => reconcile(args, ctx),
        entry.controller,
        spec.submitTimeout,
        settleSeconds,
        machine,
      );
      const ms = performance.now() - started;
      if (end.kind === "deadline") {
        this.outcomes.reconciled(job, "deadline", ms);
        await release(0, false);
        return;
      }
      let answer: ReturnType<typeof checkReconcileResult> | undefined;
      if (end.kind === "value") {
        try {
          answer = checkReconcileResult(end.value);
        } catch {
          log.error({ phase: "frozen" }, "reconcile returned an unusable result; it stays frozen");
        }
      }
      if (!answer) {
        this.outcomes.reconciled(job, "undecided", ms);
        await release(RECONCILE_RETRY_SECONDS, false);
        return;
      }
      this.outcomes.reconciled(job, answer.kind === "accepted" ? "accepted" : "not_submitted", ms);
      if (answer.kind === "accepted") {
        const found = answer.taskId;
        const ok = await this.outcomes.write("accepted phase", job.id, () =>
          backend.submissions.submissionAccept({
            jobId: job.id,
            owner,
            taskId: found,
            pollDelaySeconds: 0,
          }),
        );
        if (ok) {
          this.outcomes.phase(job, "accepted", found);
          log.info(
            { phase: "accepted", task_id: found, handoff_action: "handoff" },
            "reconciled: the provider has the task; handed to polling",
          );
        }
        return;
      }
      const ok = await this.outcomes.write("release", job.id, () =>
        backend.submissions.submissionRelease({
          jobId: job.id,
          owner,
          newKey: false,
          requeue: true,
        }),
      );
      if (ok) {
        this.outcomes.phase(job, "released", null);
        log.warn(
          { phase: "released", handoff_action: "release" },
          "reconciled: not submitted; released to be submitted again with the same idempotency key",
        );
      }
      return;
    }

    // phase accepted: poll the task by its durable id.
    const acceptedAt = claimed.acceptedAt ?? new Date(machine.now());
    let pollMs: number | null = null;
    const polled = (outcome: Parameters<RemoteOutcomes["polled"]>[2]) =>
      this.outcomes.polled(job, taskId as string, outcome, pollMs);
    if (machine.now() - acceptedAt.getTime() > spec.pollTimeout * 1000) {
      polled("timeout");
      await this.outcomes.fail(
        job,
        owner,
        {
          kind: "failed",
          error: `remote_timeout: not terminal ${spec.pollTimeout} s after it was accepted`,
          retry: false,
        },
        definition,
        log,
        taskId,
        "remote_timeout",
      );
      return;
    }
    const ctx: RemotePollContext = {
      get signal() {
        return entry.controller.signal;
      },
      jobId: job.id,
      name: job.name,
      taskId: taskId as string,
      polls: claimed.polls,
      acceptedAt,
      idempotencyKey: idempotencyKey(job.id, claimed.generation),
      workerId: this.deps.workerId,
      logger: log,
    };
    const started = performance.now();
    const end = await boundedCall(
      () => spec.poll(taskId as string, ctx),
      entry.controller,
      spec.submitTimeout,
      settleSeconds,
      machine,
    );
    pollMs = performance.now() - started;
    if (end.kind === "deadline") {
      polled("deadline");
      if (await release(0, false)) {
        this.outcomes.handoff(
          job,
          "accepted",
          dispositionOf("accepted", "deadline"),
          "deadline",
          taskId,
          log,
        );
      }
      return;
    }
    if (end.kind !== "value") {
      polled("error");
      log.warn(
        { phase: "accepted", task_id: taskId },
        `poll ${end.kind === "timeout" ? "timed out" : "threw"}; polled again in ${spec.pollEvery} s`,
      );
      await release(spec.pollEvery, true);
      return;
    }
    let answer: ReturnType<typeof checkPollResult>;
    try {
      answer = checkPollResult(end.value);
    } catch {
      polled("error");
      log.error(
        { phase: "accepted", task_id: taskId },
        "poll returned an unusable result; polled again later",
      );
      await release(spec.pollEvery, true);
      return;
    }
    polled(answer.kind);
    if (answer.kind === "pending") {
      await release(answer.everySeconds ?? spec.pollEvery, true);
      return;
    }
    if (answer.kind === "done") {
      await this.outcomes.complete(job, owner, answer.result, definition, log, taskId);
      return;
    }
    await this.outcomes.fail(job, owner, answer, definition, log, taskId);
  }
}
