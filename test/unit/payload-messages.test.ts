// Issue 29 item 7: messages naming a value's kind never read "a undefined" (or "a  is", "a Error").
import { describe, expect, it } from "vitest";
import { toJsonText } from "../../src/jobs/payload.js";
import { echoed, withArticle } from "../../src/value-text.js";

function messageOf(value: unknown): string {
  try {
    toJsonText(value, "checkpoint of x", 1_000_000);
  } catch (err) {
    return (err as Error).message;
  }
  return "(accepted)";
}

describe("payload messages", () => {
  it("toJsonText › undefined, an anonymous class, kinds starting with a vowel › no 'a undefined', 'a  is' or 'a Error'", () => {
    const cases: Array<[unknown, string]> = [
      [undefined, "the value: undefined is not representable in JSON"],
      [10n, "the value: a bigint is not representable in JSON"],
      [() => 1, "the value: a function is not representable in JSON"],
      [{ x: new (class {})() }, "at x: an instance of an anonymous class is not plain JSON"],
      [{ x: new Error("e") }, "at x: an Error is not plain JSON"],
      [{ x: new Int8Array(2) }, "at x: an Int8Array is not plain JSON"],
      [{ x: new Map() }, "at x: a Map is not plain JSON"],
    ];
    for (const [value, text] of cases) {
      const message = messageOf(value);
      expect(message).toContain(text);
      expect(message).not.toMatch(/\ba (undefined|[AEIOUaeiou]\w*|\s)/);
    }
  });

  it("withArticle, echoed › article by first letter; long input cut with its length", () => {
    expect(withArticle(undefined)).toBe("undefined");
    expect(withArticle("object")).toBe("an object");
    expect(withArticle("symbol")).toBe("a symbol");
    expect(echoed("abc")).toBe("abc");
    const long = "x".repeat(1_048_576);
    expect(echoed(long)).toBe(`${"x".repeat(60)}… (truncated: 1048576 characters)`);
  });
});
