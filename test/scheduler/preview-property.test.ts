/**
 * Property: over random cron expressions and time zones (DST transitions included), the instants
 * `preview` announces are exactly the occurrences the scheduler takes, one each, whatever the
 * step the injected database clock advances by.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { Scheduler } from "../../src/scheduler/scheduler.js";
import { memoryBackend } from "../helpers/test-backends.js";

const silent = pino({ level: "silent" });

/** A seeded PRNG (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rand: () => number, items: readonly T[]): T =>
  items[Math.floor(rand() * items.length)] as T;

const ZONES = ["UTC", "Europe/Paris", "America/New_York", "Australia/Sydney", "Asia/Kolkata"];
const STARTS = [
  "2026-03-28T20:00:00Z", // the night Europe springs forward
  "2026-10-31T20:00:00Z", // the night New York falls back (Nov 1)
  "2026-04-04T10:00:00Z", // Sydney falls back (Apr 5)
  "2026-06-15T00:00:00Z",
];

function expression(rand: () => number): string {
  const minute = pick(rand, ["0", "*/15", "30", "5,35", "*/7"]);
  const hour = pick(rand, ["*", "*/2", "1,2,3", "2", "1-3", "0"]);
  return `${minute} ${hour} * * *`;
}

describe("scheduler › property", () => {
  it("property › 40 random cron/time-zone pairs over 30 h across DST nights › taken occurrences equal preview's instants", async () => {
    const rand = random(20261201);
    for (let round = 0; round < 40; round += 1) {
      const cron = expression(rand);
      const timezone = pick(rand, ZONES);
      const start = Date.parse(pick(rand, STARTS));
      const clock = { now: start };
      const backend = await memoryBackend({ clock: () => clock.now });
      const soniq = new Soniq({ backend, logger: silent, env: {} });
      const job = soniq.job({ name: "tick.job", handler: async () => 1 });
      soniq.schedule({
        id: "prop.schedule",
        job,
        cron,
        timezone,
        args: {},
        missed: { policy: "all", grace: 0, within: 86_400, max: 1000 },
        history: 10_000,
      });
      await soniq.schedules.sync();
      const scheduler = new Scheduler({ store: backend, logger: silent });
      const end = start + 30 * 3_600_000;
      while (clock.now < end) {
        clock.now += Math.floor(rand() * 3 * 3_600_000); // steps of 0–3 h
        await scheduler.tick(0);
      }
      const taken = (await backend.scheduleRuns({ id: "prop.schedule", limit: 10_000 }))
        .map((r) => r.occurrence.getTime())
        .reverse();
      const announced = (
        await soniq.schedules.preview({
          cron,
          timezone,
          from: new Date(start),
          count: Math.max(1, taken.length + 1),
        })
      ).map((d) => d.getTime());
      const context = `${cron} ${timezone} from ${new Date(start).toISOString()}`;
      expect(new Set(taken).size, context).toBe(taken.length);
      expect(taken, context).toEqual(announced.filter((ms) => ms <= clock.now));
      expect((await backend.jobStats()).total, context).toBe(taken.length);
    }
  });
});
