/**
 * Fuzz of the CLI's flags (issue 26 item 2), in-process: the `soniq` program
 * (src/cli/soniq-program.ts, what `soniq` runs) is built afresh per case and parsed with
 * arguments made from its own commands and options (found by walking the program, so a new flag
 * is fuzzed without touching this file): arbitrary text and numbers as values, values missing,
 * unknown flags, arbitrary positional arguments, with and without `--json`, against a SQLite file
 * that has jobs and a dead letter. The oracle: every call ends with exit 0, or 2 (1 only for
 * `check-deploy`, its "too short" answer) within a bound; a failure prints `soniq: <CODE>: …` on
 * standard error (and `{"error":{"code"}}` with `--json`), never a stack trace or a raw
 * TypeError/RangeError. `process.exit` is stubbed to end the case. Left out: `worker` and
 * `dashboard` (they run until signalled; their start-up refusals have their own tests),
 * `--module` and `--database-url` (always this store: an arbitrary module would be imported, an
 * arbitrary URL could create files), and `dlq export -o` (writes an arbitrary path). Fixed seed
 * (test/helpers/fuzz.ts); `FUZZ_SEED` / `FUZZ_RUNS` explore further.
 */
import { join } from "node:path";
import type { Command, Option } from "commander";
import fc from "fast-check";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { fail } from "../../src/cli/runner.js";
import { soniqProgram } from "../../src/cli/soniq-program.js";
import { Soniq } from "../../src/index.js";
import { anyNumber, anyText, fuzzParameters } from "../helpers/fuzz.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

/** The longest one in-process command may take, in milliseconds (they take tens). */
const CASE_BOUND_MS = 10_000;

/** Thrown by the stubbed `process.exit`: ends the case where the CLI would have exited. */
class Exited extends Error {
  constructor(readonly code: number) {
    super(`process.exit(${code})`);
  }
}

const SKIPPED_COMMANDS = new Set(["worker", "dashboard", "help"]);
const SKIPPED_OPTIONS = new Set(["--module", "--database-url", "--output"]);

/** A leaf command: the words that name it and its options. */
interface Leaf {
  words: string[];
  options: readonly Option[];
  /** How many positional arguments it takes (its `[module]` left out), at most 3. */
  positional: number;
}

function leaves(command: Command, words: string[] = []): Leaf[] {
  const out: Leaf[] = [];
  for (const sub of command.commands) {
    if (SKIPPED_COMMANDS.has(sub.name())) continue;
    const path = [...words, sub.name()];
    if (sub.commands.length > 0) out.push(...leaves(sub, path));
    else {
      out.push({
        words: path,
        options: sub.options.filter((o) => !SKIPPED_OPTIONS.has(o.long ?? "")),
        // A `[module]` argument is imported: never given arbitrary text (see the module comment).
        positional: Math.min(
          3,
          sub.registeredArguments
            .filter((a) => a.name() !== "module")
            .reduce((n, a) => n + (a.variadic ? 2 : 1), 0),
        ),
      });
    }
  }
  return out;
}

describe("CLI flags fuzz (in-process, SQLite file)", () => {
  let url: string;
  let all: Leaf[];
  const known: string[] = [];

  beforeAll(async () => {
    url = `sqlite:${join(tempDir(), "cli-fuzz.db")}`;
    const soniq = new Soniq({ databaseUrl: url, logger: pino({ level: "silent" }), env: {} });
    await soniq.setup();
    const fails = soniq.job({
      name: "fuzz.fails",
      maxAttempts: 1,
      handler: async () => {
        throw new Error("boom");
      },
    });
    known.push(await soniq.enqueue("fuzz.fails", { user: { id: 7 } }, { delay: 3600 }));
    const dead = await fails.enqueue({});
    known.push(dead);
    const worker = soniq.worker({ pollInterval: 0.05 });
    await worker.start();
    await waitFor(async () => (await soniq.getDeadLetter(dead)) !== null, 20_000, "dead letter");
    await worker.stop();
    await soniq.close();
    all = leaves(await soniqProgram(undefined));
  }, 60_000);
  afterAll(() => vi.restoreAllMocks());

  /** Runs `soniq <argv>` in-process: its exit code and what it printed. */
  async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = "";
    let stderr = "";
    let code: number | undefined;
    const saved = process.argv;
    const exit = vi.spyOn(process, "exit").mockImplementation((c) => {
      code ??= Number(c ?? 0);
      throw new Exited(Number(c ?? 0));
    });
    const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      stdout += String(chunk);
      return true;
    });
    const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      stderr += String(chunk);
      return true;
    });
    process.argv = ["node", "soniq", ...argv];
    try {
      const program = await soniqProgram(argv[0]);
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("no exit within the bound")), CASE_BOUND_MS);
      });
      try {
        await Promise.race([program.parseAsync(process.argv), bound]);
      } catch (error) {
        if (!(error instanceof Exited)) {
          // What program.ts does with a throw out of parsing: fail() prints it and exits 2.
          try {
            fail(error);
          } catch (e) {
            if (!(e instanceof Exited)) throw e;
          }
          if (String(error).includes("no exit within the bound")) throw error;
        }
      } finally {
        clearTimeout(timer);
      }
    } finally {
      process.argv = saved;
      exit.mockRestore();
      out.mockRestore();
      err.mockRestore();
    }
    return { code: code ?? 0, stdout, stderr };
  }

  /**
   * One value: arbitrary text, a number's text, a real id, or one that parses (so the command
   * runs and the values after it are reached).
   */
  const value = fc.oneof(
    { weight: 3, arbitrary: anyText.map((t) => t.slice(0, 2000)) },
    { weight: 2, arbitrary: anyNumber.map(String) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        "1",
        "5",
        "0",
        "-1",
        "1001",
        "2026-01-01T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "user.id=7",
        "a=b",
        "@",
        "default",
        "queued,scheduled",
        "done",
        "crash_loop",
        "*/5 * * * *",
        "Europe/Paris",
        "fuzz.fails",
      ),
    },
    { weight: 2, arbitrary: fc.nat(5).map((i) => known[i % known.length] ?? "x") },
  );

  it("every command: arbitrary flag values and arguments → exit 0 or 2 with a coded error, never a stack trace", async () => {
    const leaf = fc.nat().map((i) => all[i % all.length] as Leaf);
    const argv = leaf.chain((l) =>
      fc
        .tuple(
          fc.subarray([...l.options], { maxLength: Math.min(3, l.options.length) }),
          fc.array(value, { minLength: l.options.length, maxLength: l.options.length }),
          fc.array(value, { minLength: l.positional, maxLength: l.positional }),
          fc.oneof(
            { weight: 9, arbitrary: fc.constant(null) },
            { weight: 1, arbitrary: anyText.map((t) => `--${t.slice(0, 20)}`) },
          ),
          fc.boolean(),
          fc.boolean(),
        )
        .map(([options, values, positional, unknownFlag, json, omitValue]) => {
          const args: string[] = [...l.words];
          options.forEach((o, i) => {
            const flag = o.long ?? o.short ?? "";
            args.push(flag);
            if ((o.required || o.optional) && !(omitValue && i === 0)) {
              args.push(values[i] as string);
            }
          });
          args.push(...positional);
          if (unknownFlag !== null) args.push(unknownFlag);
          if (json) args.push("--json");
          args.push("--database-url", url);
          return args;
        }),
    );
    await fc.assert(
      fc.asyncProperty(argv, async (args) => {
        const result = await run(args);
        const where = `soniq ${JSON.stringify(args)} → ${result.code}\n${result.stderr.slice(0, 1500)}`;
        const allowed = args[0] === "check-deploy" ? [0, 1, 2] : [0, 2];
        expect(allowed, where).toContain(result.code);
        expect(result.stderr, where).not.toMatch(/\n\s+at .+[:(]\d+:\d+/);
        expect(result.stderr, where).not.toMatch(/\b(TypeError|RangeError|ReferenceError)\b/);
        if (result.code === 2) {
          expect(result.stderr, where).toMatch(/soniq: [A-Z_]+: /);
          if (args.includes("--json") && !result.stderr.includes("INVALID_INPUT: option")) {
            // A usage error commander reports may come before --json is read; a coded failure
            // after it also prints the JSON error.
            const last = result.stdout.trim().split("\n").at(-1) ?? "";
            if (last.startsWith("{")) {
              expect(JSON.parse(last), where).toMatchObject({
                error: { code: expect.any(String) },
              });
            }
          }
        }
      }),
      fuzzParameters(200),
    );
  }, 120_000);
});
