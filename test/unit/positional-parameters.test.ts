// src/adapters/positional-parameters.ts: `$n` outside literals, identifiers, dollar quotes and
// comments are parameters; everything else is kept as it is.
import { describe, expect, it } from "vitest";
import { splitPositionalParameters } from "../../src/adapters/positional-parameters.js";

describe("splitPositionalParameters", () => {
  it("positional parameters › cut in order, repeats kept", () => {
    expect(splitPositionalParameters("SELECT $1::uuid, $12, $1 WHERE x = $2")).toEqual({
      text: ["SELECT ", "::uuid, ", ", ", " WHERE x = ", ""],
      parameters: [1, 12, 1, 2],
    });
  });

  it("no parameters › one piece", () => {
    expect(splitPositionalParameters("SELECT now()")).toEqual({
      text: ["SELECT now()"],
      parameters: [],
    });
  });

  it("$n inside literals, quoted identifiers, comments and dollar quotes › not parameters", () => {
    const sql = [
      "SELECT 'a $1 ''$2''' AS \"b$3\"\"$4\", E'\\' $5' -- $6",
      "/* $7 /* $8 */ $9 */ $fn$ $10 $fn$, $$ $11 $$, x$12, $13",
    ].join("\n");
    const split = splitPositionalParameters(sql);
    expect(split.parameters).toEqual([13]);
    expect(split.text.join("$13")).toBe(sql);
  });

  it("an unterminated literal › the rest is literal", () => {
    expect(splitPositionalParameters("SELECT $1, 'open $2").parameters).toEqual([1]);
  });
});
