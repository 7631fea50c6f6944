/**
 * The deploy budget (docs/shutdown.md, "Bounds and the deploy budget"): how long the supervisor
 * must wait between SIGTERM and SIGKILL for a drain to finish, from the settings, as named terms in
 * seconds:
 *
 *     preStop + shutdownTimeout + shutdownSettle + NACK bound + margin (+ syncHandlerGraceSeconds)
 *
 * and the comparison with a grace period, with its arithmetic spelled out. Pure: no I/O.
 */
import type { SoniqSettings } from "../settings.js";

/**
 * Seconds allowed for the NACK round trip and the last writes after the settle window (one
 * statement each on a healthy database). With the database unreachable those writes give up later
 * (exit 3), but the rows are then left for crash recovery anyway, so a SIGKILL costs nothing more.
 */
export const NACK_BOUND_SECONDS = 1;

/** Default safety margin, in seconds (process start-up of the next pod, clock skew, logs). */
export const DEFAULT_MARGIN_SECONDS = 5;

/** One term of the budget. */
export interface BudgetTerm {
  /** The setting or allowance it comes from, e.g. `shutdownTimeout`. */
  name: string;
  seconds: number;
}

/** The drain budget. */
export interface DrainBudget {
  /** The terms, in the order they happen. */
  terms: BudgetTerm[];
  /** Their sum, in seconds: the least grace period that fits. */
  requiredSeconds: number;
}

/** What the budget depends on besides the settings. */
export interface BudgetContext {
  /** Seconds a preStop hook spends before SIGTERM. Default: the `preStopSeconds` setting. */
  preStopSeconds?: number;
  /** Whether sync (worker-thread) handlers may run: adds `syncHandlerGraceSeconds`. */
  syncHandlers: boolean;
  /** Safety margin in seconds. Default {@link DEFAULT_MARGIN_SECONDS}. */
  marginSeconds?: number;
}

/** The settings the budget reads (seconds). */
export type BudgetSettings = Pick<
  SoniqSettings,
  "shutdownTimeout" | "shutdownSettle" | "syncHandlerGraceSeconds" | "jobTimeout" | "preStopSeconds"
>;

/** The budget for `settings` (all seconds). */
export function drainBudget(settings: BudgetSettings, context: BudgetContext): DrainBudget {
  const terms: BudgetTerm[] = [];
  const preStop = context.preStopSeconds ?? settings.preStopSeconds;
  if (preStop > 0) terms.push({ name: "preStop", seconds: preStop });
  terms.push({ name: "shutdownTimeout", seconds: settings.shutdownTimeout });
  terms.push({ name: "shutdownSettle", seconds: settings.shutdownSettle });
  if (context.syncHandlers) {
    terms.push({
      name: "syncHandlerGraceSeconds",
      seconds: settings.syncHandlerGraceSeconds ?? settings.jobTimeout,
    });
  }
  terms.push({ name: "NACK bound", seconds: NACK_BOUND_SECONDS });
  terms.push({ name: "margin", seconds: context.marginSeconds ?? DEFAULT_MARGIN_SECONDS });
  const requiredSeconds = terms.reduce((sum, term) => sum + term.seconds, 0);
  return { terms, requiredSeconds };
}

/** The verdict of a grace period against a budget. */
export interface BudgetVerdict {
  /** True when `graceSeconds >= requiredSeconds`. */
  fits: boolean;
  graceSeconds: number;
  requiredSeconds: number;
  /** The arithmetic: `preStop 5 + shutdownTimeout 30 + … = 43 s`. */
  arithmetic: string;
  /** One line: `45 s ≥ 43 s: fits (2 s to spare)` or `30 s < 43 s: 13 s short`. */
  summary: string;
}

/** Compares a grace period (seconds) with a budget. */
export function checkGrace(graceSeconds: number, budget: DrainBudget): BudgetVerdict {
  const arithmetic = `${budget.terms.map((t) => `${t.name} ${fmt(t.seconds)}`).join(" + ")} = ${fmt(budget.requiredSeconds)} s`;
  const fits = graceSeconds >= budget.requiredSeconds;
  const diff = Math.abs(graceSeconds - budget.requiredSeconds);
  const summary = fits
    ? `${fmt(graceSeconds)} s ≥ ${fmt(budget.requiredSeconds)} s: fits (${fmt(diff)} s to spare)`
    : `${fmt(graceSeconds)} s < ${fmt(budget.requiredSeconds)} s: ${fmt(diff)} s short — the supervisor would SIGKILL the worker in the middle of its drain`;
  return { fits, graceSeconds, requiredSeconds: budget.requiredSeconds, arithmetic, summary };
}

/**
 * The worker's start-up check: when `terminationGraceSeconds` is known and too short for the
 * budget, the warning text; otherwise undefined.
 */
export function startupBudgetWarning(
  settings: BudgetSettings & Pick<SoniqSettings, "terminationGraceSeconds">,
  syncHandlers: boolean,
): { message: string; verdict: BudgetVerdict } | undefined {
  const grace = settings.terminationGraceSeconds;
  if (grace === null) return undefined;
  const verdict = checkGrace(grace, drainBudget(settings, { syncHandlers }));
  if (verdict.fits) return undefined;
  return {
    message: `terminationGraceSeconds is too short for the drain: ${verdict.summary}; budget ${verdict.arithmetic} (raise the supervisor's grace or lower shutdownTimeout; docs/shutdown.md)`,
    verdict,
  };
}

function fmt(seconds: number): string {
  return Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(2).replace(/0+$/, "");
}
