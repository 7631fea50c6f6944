/** The dashboard's error texts: stack frames hidden, or shown with paths relative to the cwd. */
import { describe, expect, it } from "vitest";
import { shownErrorText } from "../../src/dashboard/stack-frames.js";

const TEXT = [
  "Error: cannot read /srv/app/data/in.csv",
  "    at parse (/srv/app/src/parse.ts:10:5)",
  "    at file:///srv/app/src/main.ts:3:1",
  "    at run (/usr/lib/node_modules/tool/index.js:1:2)",
  "    at node:internal/process/task_queues:95:5",
  "caused by: TypeError: bad",
].join("\n");

describe("dashboard stack frames", () => {
  it("stack frames › hidden › one line counting them, the cwd cut from the message", () => {
    expect(shownErrorText(TEXT, false, "/srv/app")).toBe(
      [
        "Error: cannot read data/in.csv",
        "    [4 stack frames hidden]",
        "caused by: TypeError: bad",
      ].join("\n"),
    );
  });

  it("stack frames › shown › relative under the cwd, file name only outside it", () => {
    expect(shownErrorText(TEXT, true, "/srv/app/")).toBe(
      [
        "Error: cannot read data/in.csv",
        "    at parse (src/parse.ts:10:5)",
        "    at src/main.ts:3:1",
        "    at run (…/index.js:1:2)",
        "    at node:internal/process/task_queues:95:5",
        "caused by: TypeError: bad",
      ].join("\n"),
    );
  });
});
