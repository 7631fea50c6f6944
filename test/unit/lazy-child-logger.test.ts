import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { lazyChildLogger, lazyJobLogger } from "../../src/observability/lazy-child-logger.js";

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

describe("lazyChildLogger (a job's logger, created on first use)", () => {
  it("creates no child for lines below the level; one child, with the bindings, for enabled lines", async () => {
    const { logger, lines } = capture("warn");
    const child = vi.spyOn(logger, "child");
    const log = lazyChildLogger(logger, { job_id: "j1", attempt: 1 });
    log.debug({ a: 1 }, "started");
    log.info("done");
    expect(child).not.toHaveBeenCalled();
    log.warn({ b: 2 }, "slow");
    log.error("failed %s", "twice");
    expect(child).toHaveBeenCalledTimes(1);
    await new Promise((r) => setImmediate(r));
    expect(lines).toMatchObject([
      { job_id: "j1", attempt: 1, b: 2, msg: "slow", level: 40 },
      { job_id: "j1", msg: "failed twice", level: 50 },
    ]);
  });

  it("hands out the real child logger when asked (a handler's ctx.logger), and the parent's level changes apply", async () => {
    const { logger, lines } = capture("warn");
    const log = lazyChildLogger(logger, { job_id: "j2" });
    expect(log.logger.bindings()).toEqual({ job_id: "j2" });
    expect(log.logger).toBe(log.logger);
    logger.level = "info";
    log.info("now visible");
    await new Promise((r) => setImmediate(r));
    expect(lines).toMatchObject([{ job_id: "j2", msg: "now visible" }]);
  });

  it("lazyJobLogger binds job_id, job_name and attempt (attempts + 1) when the child is made", async () => {
    const { logger, lines } = capture("info");
    const job = { id: "j3", name: "emails.send", attempts: 2 };
    const log = lazyJobLogger(logger, job);
    expect(log.logger.bindings()).toEqual({ job_id: "j3", job_name: "emails.send", attempt: 3 });
    log.info("done");
    await new Promise((r) => setImmediate(r));
    expect(lines).toMatchObject([
      { job_id: "j3", job_name: "emails.send", attempt: 3, msg: "done" },
    ]);
  });
});
