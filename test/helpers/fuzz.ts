/**
 * Shared parts of the fuzz tests (test/fuzz/): the run parameters (a fixed default seed so CI is
 * deterministic, `FUZZ_SEED` / `FUZZ_RUNS` to explore), the documented error codes, the oracle
 * "success or a SoniqError with a documented code", and arbitraries of hostile values.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { isSoniqError } from "../../src/errors.js";

/** The seed every fuzz property uses unless `FUZZ_SEED` names another. */
export const DEFAULT_FUZZ_SEED = 20_261_205;

/**
 * fast-check parameters: the seed (`FUZZ_SEED`, else {@link DEFAULT_FUZZ_SEED}) and the number of
 * runs (`FUZZ_RUNS`, else `defaultRuns`). A failure's message names the seed and the shrunk input
 * (fast-check prints both); rerun it with `FUZZ_SEED=<seed>`.
 */
export function fuzzParameters(defaultRuns: number): fc.Parameters<unknown> {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : DEFAULT_FUZZ_SEED;
  const runs = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : defaultRuns;
  return { seed, numRuns: runs };
}

/** Every code of the `SoniqErrorCode` union, read from src/errors.ts (where each is documented). */
export const DOCUMENTED_CODES: ReadonlySet<string> = new Set(
  [
    ...readFileSync(new URL("../../src/errors.ts", import.meta.url), "utf8").matchAll(
      /^\s+\| "([A-Z_]+)"/gm,
    ),
  ].map((m) => m[1] as string),
);

/** What a fuzzed call did: its value, or the documented code it refused with. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; code: string };

/**
 * Runs `call`: its value, or the code of the {@link SoniqError} it threw. Any other error (a raw
 * `TypeError`, `RangeError`, a driver error) or an undocumented code fails the property, with the
 * error's stack in the message.
 */
export async function coded<T>(call: () => T | Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (err) {
    if (isSoniqError(err) && DOCUMENTED_CODES.has(err.code)) return { ok: false, code: err.code };
    const shown = err instanceof Error ? (err.stack ?? err.message) : String(err);
    throw new Error(`not a documented SoniqError: ${shown}`);
  }
}

/** Strings that have broken stores and parsers before, mixed with arbitrary text. */
const SPECIAL_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\uD800",
  "x\uDFFFy",
  "\u202Eevil",
  "日本語",
  "🎉",
  "__proto__",
  "constructor",
  "toString",
  "null",
  "NaN",
  "-0",
  "1e308",
  "9".repeat(400),
  "a".repeat(501),
  "q".repeat(101),
  "%",
  "%00",
  "%ZZ",
  "../../etc/passwd",
  "'; DROP TABLE soniq_jobs; --",
  "2026-02-30T00:00:00Z",
  "2026-01-01T00:00:00",
  "2026-01-01T00:00:00Z",
  "+275760-09-13T00:00:00Z",
  "0000-01-01T00:00:00Z",
  "mail",
  "default",
];

/** Arbitrary text: unicode, any UTF-16 unit (lone surrogates), NUL, or a known troublemaker. */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(...SPECIAL_STRINGS),
  fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 12 }),
);

/** Numbers at the edges: NaN, ±Infinity, -0, 1e308, huge integers, fractions, subnormals. */
export const anyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: -2000, max: 2000 }),
  fc.double(),
  fc.constantFrom(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    -0,
    1e308,
    -1e308,
    2 ** 53 + 2,
    -(2 ** 63),
    0.5,
    5e-324,
    1000,
    1001,
    100_000,
  ),
);

/** Arrays nested `depth` levels around one number. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** JSON-ish values of every shape, plus what JSON cannot hold (undefined, Date, BigInt, …). */
export const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: "small" },
  anyText,
  anyNumber,
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(anyText, fc.oneof(anyText, anyNumber, fc.constant(null)), { maxKeys: 4 }),
  fc.array(fc.oneof(anyText, anyNumber), { maxLength: 4 }),
  fc.constantFrom<unknown>(
    new Date(0),
    new Date(Number.NaN),
    10n,
    Symbol("s"),
    () => 1,
    new Map(),
    [undefined],
    Object.create(null),
  ),
  fc.integer({ min: 200, max: 3000 }).map(nested),
  fc.integer({ min: 1, max: 1_200_000 }).map((n) => "x".repeat(n)),
);

/**
 * An object with some of `fields` (each value from its own arbitrary) and sometimes an unknown key
 * (which may be `__proto__`): what a caller who misread the docs, or an attacker, passes as options.
 */
export function optionsOf(
  fields: Readonly<Record<string, fc.Arbitrary<unknown>>>,
): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(fields);
  return fc
    .tuple(
      fc.subarray(keys),
      fc.tuple(...keys.map((key) => fields[key] as fc.Arbitrary<unknown>)),
      fc.option(fc.tuple(anyText, anyValue), { freq: 6 }),
    )
    .map(([chosen, values, extra]) => {
      const options: Record<string, unknown> = {};
      for (const key of chosen) options[key] = values[keys.indexOf(key)];
      // defineProperty: `__proto__` becomes an own key, as JSON.parse makes it.
      if (extra !== null) {
        Object.defineProperty(options, extra[0], {
          value: extra[1],
          enumerable: true,
          configurable: true,
          writable: true,
        });
      }
      return options;
    });
}

/** Sometimes a well-formed value, sometimes anything: deep paths are reached, edges are hit. */
export function mostly<T>(good: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 3, arbitrary: good }, { weight: 2, arbitrary: anyValue });
}
