import { describe, expect, it } from "vitest";
import { errorText } from "../../src/worker/error-text.js";

describe("errorText (what last_error stores)", () => {
  it("keeps name, message and the cause chain", () => {
    const err = new TypeError("fetch failed", {
      cause: new Error("getaddrinfo ENOTFOUND mail.example"),
    });
    const text = errorText(err);
    expect(text).toContain("TypeError: fetch failed");
    expect(text).toContain("caused by: Error: getaddrinfo ENOTFOUND mail.example");
  });

  it("records non-Errors sensibly, including circular objects", () => {
    expect(errorText(null)).toBe("non-Error thrown (null): null");
    expect(errorText("plain")).toBe("non-Error thrown (string): plain");
    expect(errorText({ code: 42 })).toBe('non-Error thrown (object): {"code":42}');
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(errorText(circular)).toBe("non-Error thrown (object): [object Object]");
    expect(errorText(undefined)).toBe("non-Error thrown (undefined): undefined");
  });

  it("makes NUL and lone surrogates safe for every store, and bounds the length", () => {
    const text = errorText(new Error("a\u0000b\ud800c"));
    expect(text).not.toContain("\u0000");
    expect(text.isWellFormed()).toBe(true);
    expect(errorText(new Error("x".repeat(10_000))).length).toBeLessThanOrEqual(4001);
  });

  it("never throws, whatever was thrown", () => {
    const nullProto = Object.assign(Object.create(null), { code: "E_PROVIDER", status: 502n });
    expect(errorText(nullProto)).toContain("non-Error thrown (object)");
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(errorText(proxy)).toContain("unprintable");
    const badStack = new Error("m");
    Object.defineProperty(badStack, "stack", {
      get() {
        throw new Error("no stack for you");
      },
    });
    expect(errorText(badStack)).toContain("m");
    const hostile = {
      toJSON() {
        throw new Error("x");
      },
      toString() {
        throw new Error("y");
      },
    };
    expect(errorText(hostile)).toContain("non-Error thrown (object)");
    expect(errorText(Symbol("s"))).toContain("Symbol(s)");
  });

  it("does not split a surrogate pair when it truncates", () => {
    const text = errorText(new Error(`${"x".repeat(3992)}😀`));
    expect(text.isWellFormed()).toBe(true);
  });
});
