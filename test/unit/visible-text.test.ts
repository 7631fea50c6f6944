/** Bidirectional-control characters shown as their escapes (CLI output, dashboard page). */
import { describe, expect, it } from "vitest";
import { visibleText } from "../../src/admin/visible-text.js";

describe("visible text", () => {
  it("visibleText › every bidirectional control › its escape; other text unchanged", () => {
    const controls = [0x61c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e]
      .concat([0x2066, 0x2067, 0x2068, 0x2069])
      .map((c) => String.fromCodePoint(c));
    for (const c of controls) {
      const hex = (c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0");
      expect(visibleText(`a${c}b`)).toBe(`a\\u${hex}b`);
    }
    expect(visibleText("héllo ‐ 日本 \u200D")).toBe("héllo ‐ 日本 \u200D");
  });

  it("visibleText › JSON text › still parses to the same value", () => {
    const value = { name: "invoice\u202Egnp.exe", "\u2066key": ["\u200F"] };
    const shown = visibleText(JSON.stringify(value));
    expect(shown).not.toMatch(/[\u202E\u2066\u200F]/);
    expect(JSON.parse(shown)).toEqual(value);
  });
});
