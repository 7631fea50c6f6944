/**
 * The `pgbouncer` vitest project (vitest.config.ts) lists by hand the worker files it runs once
 * more through PgBouncer. This test holds the list to what it claims: every file under
 * test/worker/ whose blocks run on each backend (`describeEachBackend`) is in it, and nothing else.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import config from "../../vitest.config.js";

const root = new URL("../../", import.meta.url);

describe("vitest.config.ts › pgbouncer project", () => {
  it("include › the worker files with describeEachBackend, no more, no fewer", () => {
    const project = config.test?.projects?.find(
      (p) => typeof p === "object" && "test" in p && p.test?.name === "pgbouncer",
    ) as { test: { include: string[] } } | undefined;
    const listed = [...(project?.test.include ?? [])].sort();
    const onEachBackend = readdirSync(new URL("test/worker/", root))
      .filter((name) => name.endsWith(".test.ts"))
      .map((name) => `test/worker/${name}`)
      .filter((path) => /\bdescribeEachBackend\(/.test(readFileSync(new URL(path, root), "utf8")))
      .sort();
    expect(onEachBackend.length).toBeGreaterThan(0);
    expect(listed).toEqual(onEachBackend);
  });
});
