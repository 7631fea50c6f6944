/**
 * Runs a describe block once per suite kind of test-backends.ts — a SQLite file and
 * PostgreSQL (skipped loudly when unreachable) — each test getting a fresh, set-up, empty store
 * from `target.open()`, closed after the test.
 */
import { describe } from "vitest";
import { availableKinds, SUITE_KINDS, type TestBackends, useBackends } from "./test-backends.js";

/** The stores of one kind a block runs on (`open()`: a fresh, set-up, empty store). */
export type BackendTarget = TestBackends;

const available = await availableKinds(SUITE_KINDS);

/** `fn` as one describe block per suite kind, named `${name} on ${kind}`. */
export function describeEachBackend(name: string, fn: (target: BackendTarget) => void): void {
  for (const kind of SUITE_KINDS) {
    describe.skipIf(!available.has(kind))(`${name} on ${kind}`, () => {
      fn(useBackends(kind, { schemaPrefix: "soniq_w" }));
    });
  }
}
