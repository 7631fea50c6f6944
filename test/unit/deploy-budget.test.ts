/** The example manifests under deploy/ give the drain enough time with Soniq's defaults. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { resolveSettings } from "../../src/settings-resolution.js";

const defaults = resolveSettings({}, {});
const read = (name: string) =>
  readFileSync(new URL(`../../deploy/${name}`, import.meta.url), "utf8");
const number = (text: string, pattern: RegExp) => Number(pattern.exec(text)?.[1]);
const MARGIN = 3;

describe("deploy budgets agree with the defaults (docs/shutdown.md)", () => {
  const drain = defaults.shutdownTimeout + defaults.shutdownSettle;

  it("Kubernetes: terminationGracePeriodSeconds > preStop + shutdownTimeout + settle + margin", () => {
    const yaml = read("kubernetes.yaml");
    const grace = number(yaml, /terminationGracePeriodSeconds:\s*(\d+)/);
    const preStop = number(yaml, /command:\s*\["sleep",\s*"(\d+)"\]/);
    expect(grace).toBeGreaterThan(preStop + drain + MARGIN);
  });

  it("systemd: TimeoutStopSec > shutdownTimeout + settle + margin", () => {
    expect(number(read("soniq-worker.service"), /TimeoutStopSec=(\d+)/)).toBeGreaterThan(
      drain + MARGIN,
    );
  });

  it("Compose: stop_grace_period > shutdownTimeout + settle + margin", () => {
    expect(number(read("docker-compose.yaml"), /stop_grace_period:\s*(\d+)s/)).toBeGreaterThan(
      drain + MARGIN,
    );
  });
});
