#!/usr/bin/env node
/**
 * The `soniq` command's entry point. It loads nothing heavy before `soniq worker` has its signal
 * handlers (see early-signals.ts); program.ts lists the commands, one module each in commands/.
 */
import { catchSignalsEarly } from "./early-signals.js";

if (process.argv[2] === "worker") catchSignalsEarly();
await import("./program.js");
