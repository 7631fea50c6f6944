/** The CLI's due-time text (`jobs list` DUE column, `jobs show` due line). */
import { describe, expect, it } from "vitest";
import { FROZEN_UNTIL_MS } from "../../src/backends/contract/index.js";
import { WAITING_RUN_AT } from "../../src/backends/shared/flow-graph.js";
import { dueText, span } from "../../src/cli/admin-flags.js";

describe("due text", () => {
  it("span › the unit follows the rounded value", () => {
    expect(span(45_000)).toBe("45s");
    expect(span(59_600)).toBe("1m");
    expect(span(12 * 60_000)).toBe("12m");
    expect(span(3_599_000)).toBe("1h");
    expect(span(3 * 3_600_000)).toBe("3h");
    expect(span(86_399_000)).toBe("1d");
    expect(span(5 * 86_400_000)).toBe("5d");
  });

  it("dueText › scheduled, due, and any other status", () => {
    const now = Date.parse("2026-12-05T19:00:00Z");
    const at = (ms: number) => new Date(now + ms);
    expect(dueText({ status: "scheduled", scheduledAt: at(3_599_500) }, now)).toBe(
      "in 1h (2026-12-05T19:59:59Z)",
    );
    expect(dueText({ status: "queued", scheduledAt: at(-200) }, now)).toBe("now");
    expect(dueText({ status: "queued", scheduledAt: at(-300_000) }, now)).toBe(
      "5m ago (2026-12-05T18:55:00Z)",
    );
    expect(dueText({ status: "done", scheduledAt: at(0) }, now)).toBe("-");
  });

  it("dueText › a workflow job waiting for its dependencies and a frozen job › named, not 'in 2912102d'", () => {
    const now = Date.parse("2026-12-05T19:00:00Z");
    // PostgreSQL stores the waiting instant with microseconds (…59.999999); a Date keeps …59.999.
    const waiting = new Date("9999-12-31T23:59:59.999Z");
    expect(waiting.getTime()).toBe(WAITING_RUN_AT.getTime());
    expect(dueText({ status: "scheduled", scheduledAt: waiting }, now)).toBe(
      "waiting for its dependencies",
    );
    expect(dueText({ status: "scheduled", scheduledAt: new Date(FROZEN_UNTIL_MS) }, now)).toBe(
      "never: frozen (soniq jobs resolve-step)",
    );
    // Any other far-future due time is a plain scheduled one.
    expect(
      dueText({ status: "scheduled", scheduledAt: new Date("9999-12-30T00:00:00Z") }, now),
    ).toMatch(/^in \d+d \(9999-12-30T00:00:00Z\)$/);
  });
});
