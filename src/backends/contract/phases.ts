/**
 * The submission phases of a remote job and the one table of legal transitions
 * (docs/remote-jobs.md, "The phases": each phase is durable before the side effect it announces).
 * Every store applies a transition only from the phases listed here; this module is the rule and
 * the words.
 *
 *   (claimed, no row) ─mark─▶ submitting ─accept─▶ accepted ─pending─▶ accepted
 *        ▲                     │  │                  │ └─done/failed─▶ finished
 *        │                     │  └─freeze─▶ frozen ─┤ (reconcile / operator: accepted)
 *        └──── released ◀──────┴─────────────────────┘ (definite failure with retry, notSubmitted)
 *
 * `released` is not a resting place: the job row is queued (or about to be) and its next claim
 * marks `submitting` again — with the same idempotency key after `notSubmitted`, a new one after a
 * definite failure.
 */
import { SoniqError } from "../../errors.js";

/** The durable phases of a submission (column `phase` of `soniq_remote_submissions`). */
export type SubmissionPhase = "submitting" | "accepted" | "frozen" | "released" | "finished";

/** Every phase, in lifecycle order. */
export const SUBMISSION_PHASES: readonly SubmissionPhase[] = [
  "submitting",
  "accepted",
  "frozen",
  "released",
  "finished",
];

/** The phase before the first mark: the job is claimed and has no submission row. */
export type PhaseOrNone = SubmissionPhase | "none";

/** Legal transitions: from → the phases it may move to. */
export const PHASE_TRANSITIONS: Readonly<Record<PhaseOrNone, readonly SubmissionPhase[]>> = {
  none: ["submitting"],
  released: ["submitting"],
  submitting: ["accepted", "frozen", "released", "finished"],
  accepted: ["accepted", "released", "finished"],
  frozen: ["accepted", "released", "finished"],
  finished: [],
};

/** True when `from → to` is in {@link PHASE_TRANSITIONS}. */
export function canTransition(from: PhaseOrNone, to: SubmissionPhase): boolean {
  return PHASE_TRANSITIONS[from].includes(to);
}

/** The phases a transition to `to` may start from. */
export function phasesInto(to: SubmissionPhase): PhaseOrNone[] {
  return (Object.keys(PHASE_TRANSITIONS) as PhaseOrNone[]).filter((from) =>
    canTransition(from, to),
  );
}

/**
 * Checks one transition.
 * @throws SoniqError `ILLEGAL_PHASE` when `from → to` is not legal.
 */
export function assertTransition(from: PhaseOrNone, to: SubmissionPhase): void {
  if (!canTransition(from, to)) {
    throw new SoniqError("ILLEGAL_PHASE", `a submission cannot move from ${from} to ${to}`, {
      details: { from, to },
    });
  }
}

/**
 * Reads a phase from stored or typed text.
 * @throws SoniqError `UNKNOWN_PHASE` for anything not in {@link SUBMISSION_PHASES}.
 */
export function parsePhase(text: unknown): SubmissionPhase {
  if (typeof text === "string" && (SUBMISSION_PHASES as readonly string[]).includes(text)) {
    return text as SubmissionPhase;
  }
  throw new SoniqError("UNKNOWN_PHASE", `unknown submission phase ${JSON.stringify(text)}`);
}

/** The idempotency key of a job's submission generation: `<job id>:<generation>`. */
export function idempotencyKey(jobId: string, generation: number): string {
  return `${jobId}:${generation}`;
}
