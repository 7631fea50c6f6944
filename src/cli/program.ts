/**
 * The `soniq` program run on this process's arguments (soniq-program.ts builds it). Only the
 * module of the command being run is loaded (all of them for help and usage errors).
 * Exit codes: 0 drained / success, 1 shutdown deadline path taken, 2 start-up or configuration
 * error, 3 outcome not recorded (exit-codes.ts).
 */
import { handleClosedPipes } from "./closed-pipe.js";
import { fail } from "./runner.js";
import { soniqProgram } from "./soniq-program.js";

// The command named first on the line, or every command (help, a version flag, a usage error).
const named = process.argv[2];
// `soniq … | head`: a closed pipe ends a command quietly (exit 0); the worker ignores it.
handleClosedPipes(named === "worker" ? "ignore" : "exit");
const program = await soniqProgram(named);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  fail(err);
}
