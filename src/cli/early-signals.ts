/**
 * SIGTERM/SIGINT handlers for `soniq worker`, installed before anything heavy loads: without a
 * handler, a signal during start-up (loading commander, the drivers, the user's module — up to
 * seconds on a busy machine) would kill the process by the default action instead of ending in
 * an orderly drain. Signals that arrive before the worker exists are kept and handed over.
 */
const received: NodeJS.Signals[] = [];
let forward: ((signal: NodeJS.Signals) => void) | undefined;

function onSignal(signal: NodeJS.Signals): void {
  if (forward) forward(signal);
  else received.push(signal);
}

/** Starts catching SIGTERM and SIGINT. */
export function catchSignalsEarly(): void {
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

/** Sends every signal caught so far, and every later one, to `handler`. */
export function forwardSignals(handler: (signal: NodeJS.Signals) => void): void {
  forward = handler;
  for (const signal of received.splice(0)) handler(signal);
}
