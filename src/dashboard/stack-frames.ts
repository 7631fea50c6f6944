/**
 * Error texts as dashboard users see them: `last_error` stores the thrown error's stack
 * (worker/error-text.ts), whose frames name the server's files by absolute path. Without the
 * `stackTraces` grant the frames are replaced by one `[N stack frames hidden]` line; with it
 * they stay, with paths relative to the serving process's working directory.
 */
import { sep } from "node:path";

/** A V8 stack frame line: `    at fn (/app/src/x.ts:10:5)`. */
const FRAME = /^\s+at\s/;
/** An absolute path (or `file://` URL) in a frame, up to its `:line:col` or `)`. */
const ABSOLUTE = /(?<=^|[\s(])(?:file:\/\/)?((?:\/|[A-Za-z]:\\)[^\s():]*)/g;

/** `path` relative to `cwd` when under it, else `…/` and its file name. */
function relative(path: string, cwd: string): string {
  const root = cwd.endsWith(sep) ? cwd : `${cwd}${sep}`;
  if (path.startsWith(root)) return path.slice(root.length);
  const name = path.split(/[\\/]/).pop() ?? "";
  return `…/${name}`;
}

/**
 * `text` with its stack frames hidden (`showFrames` false) or shown with relative paths; every
 * other line keeps its text, with `cwd` itself removed from it.
 * @param cwd the directory paths are made relative to (default `process.cwd()`).
 */
export function shownErrorText(text: string, showFrames: boolean, cwd = process.cwd()): string {
  const root = cwd.endsWith(sep) ? cwd : `${cwd}${sep}`;
  const out: string[] = [];
  let hidden = 0;
  const flush = () => {
    if (hidden > 0) out.push(`    [${hidden} stack frame${hidden === 1 ? "" : "s"} hidden]`);
    hidden = 0;
  };
  for (const line of text.split("\n")) {
    if (FRAME.test(line)) {
      if (showFrames) out.push(line.replace(ABSOLUTE, (_m, path: string) => relative(path, cwd)));
      else hidden++;
      continue;
    }
    flush();
    out.push(line.split(`file://${root}`).join("").split(root).join(""));
  }
  flush();
  return out.join("\n");
}
