/**
 * What flow-control limits hold back, seen from the CLI (issue 28 item 6; docs/flow-control.md,
 * "Seeing what a limit holds back"), on a SQLite file and PostgreSQL: with a real worker running
 * one job of each of two keys at their concurrency limit of 1 (one key with 2 more due) and a
 * key with 2 due jobs behind its rate limit of one start a minute, `soniq queues show tenants`
 * and `soniq status` (text and `--json`, valid against docs/schemas) show the keys' running
 * counts, 2 held by concurrency, 2 held by rate and the next window about a minute ahead; a
 * queue without keyed jobs shows nothing held; an unknown queue is NOT_FOUND (exit 2).
 */
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { prepared, targets } from "../helpers/e2e-targets.js";
import { defineFlowJobs, seedHeldJobs } from "../helpers/flow-seed.js";
import { expectValid } from "../helpers/json-schemas.js";

const stops: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const stop of stops) await stop();
});

for (const target of targets) {
  describe.skipIf(target.skip)(`flow control seen from the CLI on ${target.label}`, () => {
    it(`${target.label} › keys at their concurrency and rate limits › queues show and status show running per key, held by concurrency and by rate, the next window`, async () => {
      const { env, db } = await prepared(target);
      const { release } = defineFlowJobs(db);
      db.job({ name: "plain.job", queue: "plain", handler: async () => undefined });
      await db.enqueue("plain.job", {}, { delay: 3600 });
      const seed = await seedHeldJobs(db, release);
      stops.push(async () => {
        seed.release();
        await seed.worker.stop();
        await db.close();
      });
      const began = Date.now();

      const show = await runCli(["queues", "show", "tenants", "--json"], env);
      expect(show.code, show.stderr).toBe(0);
      const detail = JSON.parse(show.stdout);
      expectValid("queue-detail", detail, "queues show");
      expect(detail).toMatchObject({
        name: "tenants",
        processing: 2,
        flow: { queue: "tenants", keys: 3, heldByConcurrency: 2, heldByRate: 2 },
      });
      const next = Date.parse(detail.flow.nextWindowAt);
      expect(next).toBeGreaterThan(began + 30_000);
      expect(next).toBeLessThan(began + 61_000);
      expect(detail.flow.topKeys.slice(0, 2)).toEqual([
        expect.objectContaining({
          key: "a",
          running: 1,
          due: 2,
          concurrencyLimit: 1,
          heldByConcurrency: 2,
          heldByRate: 0,
        }),
        expect.objectContaining({
          key: "b",
          running: 1,
          due: 0,
          concurrencyLimit: 1,
          heldByConcurrency: 0,
        }),
      ]);
      expect(detail.flow.topKeys[2]).toMatchObject({
        key: "r",
        running: 0,
        due: 2,
        rateLimit: 1,
        startsInWindow: 1,
        heldByConcurrency: 0,
        heldByRate: 2,
        nextWindowAt: detail.flow.nextWindowAt,
      });

      const text = await runCli(["queues", "show", "tenants"], env);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/held by concurrency limit\s+2/);
      expect(text.stdout).toMatch(/held by rate limit\s+2/);
      expect(text.stdout).toContain(`next window                ${detail.flow.nextWindowAt}`);
      expect(text.stdout).toMatch(/tenants\s+a\s+1\/1\s+2\s+2\s+-\s+0/);
      expect(text.stdout).toMatch(/tenants\s+r\s+0\s+2\s+0\s+1\/1\s+2\s+\S+Z/);

      const top1 = await runCli(["queues", "show", "tenants", "--top", "1", "--json"], env);
      expect(JSON.parse(top1.stdout).flow.topKeys.map((k: { key: string }) => k.key)).toEqual([
        "a",
      ]);

      const plain = await runCli(["queues", "show", "plain", "--json"], env);
      expect(plain.code, plain.stderr).toBe(0);
      expect(JSON.parse(plain.stdout).flow).toEqual({
        queue: "plain",
        keys: 0,
        heldByConcurrency: 0,
        heldByRate: 0,
        nextWindowAt: null,
        topKeys: [],
      });
      const unknown = await runCli(["queues", "show", "tenats", "--json"], env);
      expect(unknown.code).toBe(2);
      expect(JSON.parse(unknown.stdout)).toMatchObject({ error: { code: "NOT_FOUND" } });
      expect(JSON.parse(unknown.stdout).error.message).toContain('did you mean "tenants"');

      const status = await runCli(["status", "--json"], env);
      expect(status.code, status.stderr).toBe(0);
      const json = JSON.parse(status.stdout);
      expectValid("status", json, "status");
      expect(json.queues.find((q: { name: string }) => q.name === "tenants")).toMatchObject({
        heldByConcurrency: 2,
        heldByRate: 2,
        nextWindowAt: detail.flow.nextWindowAt,
      });
      expect(json.queues.find((q: { name: string }) => q.name === "plain")).toMatchObject({
        heldByConcurrency: 0,
        heldByRate: 0,
        nextWindowAt: null,
      });
      expect(json.topKeys.map((k: { key: string; running: number }) => [k.key, k.running])).toEqual(
        [
          ["a", 1],
          ["b", 1],
          ["r", 0],
        ],
      );
      const statusText = await runCli(["status"], env);
      expect(statusText.code, statusText.stderr).toBe(0);
      expect(statusText.stdout).toContain("HELD (CONCURRENCY)");
      expect(statusText.stdout).toContain("top keys");
      expect(statusText.stdout).toMatch(/tenants\s+a\s+1\/1\s+2\s+2/);
    }, 120_000);
  });
}
