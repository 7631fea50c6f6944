/** docs/dashboard.openapi.json documents every route the handler serves, with its method and grant. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ROUTES } from "../../src/dashboard/handler.js";

const doc = JSON.parse(readFileSync("docs/dashboard.openapi.json", "utf8")) as {
  paths: Record<string, Record<string, { "x-soniq-action"?: string }>>;
};

describe("dashboard OpenAPI", () => {
  it("dashboard OpenAPI › every route › is documented with its method and write grant", () => {
    for (const route of ROUTES) {
      const path = route.path.replace(/:([a-z]+)/g, "{$1}");
      const operation = doc.paths[path]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${path}`).toBeDefined();
      if (route.action) expect(operation?.["x-soniq-action"]).toBe(route.action);
      if (route.method !== "GET") expect(operation?.["x-soniq-action"]).toBeDefined();
    }
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => `${m} ${p}`),
    );
    expect(documented).toHaveLength(ROUTES.length);
  });
});
