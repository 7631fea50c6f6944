// src/adapters/array-literal.ts: arrays as PostgreSQL array-literal text (read back by the
// statement's cast; the real round trip is in test/adapters/drizzle.test.ts).
import { describe, expect, it } from "vitest";
import { arrayLiteral } from "../../src/adapters/array-literal.js";

describe("arrayLiteral", () => {
  it('scalars › NULL, numbers and booleans bare, strings quoted with \\ and " escaped', () => {
    expect(arrayLiteral([null, undefined, 0, -1.5, true, false, 'a"b\\c', "{x,y}", ""])).toBe(
      '{NULL,NULL,0,-1.5,t,f,"a\\"b\\\\c","{x,y}",""}',
    );
    expect(arrayLiteral([])).toBe("{}");
  });

  it("nested arrays or objects › TypeError", () => {
    expect(() => arrayLiteral([[1]])).toThrow(TypeError);
    expect(() => arrayLiteral([{}])).toThrow(TypeError);
  });
});
