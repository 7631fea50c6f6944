import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const README = fileURLToPath(new URL("../../README.md", import.meta.url));

/**
 * The README's fenced code blocks whose first line is `// <file>` (optionally followed by
 * "(continued)" or a dash and a note), joined per file in order. `section` limits the search to
 * the text from that heading to the next heading of the same level.
 */
export function readmeFiles(section?: string): Record<string, string> {
  let text = readFileSync(README, "utf8");
  if (section) {
    const start = text.indexOf(section);
    if (start < 0) throw new Error(`README has no section ${section}`);
    const level = /^#+/.exec(section)?.[0] ?? "##";
    const end = text.indexOf(`\n${level} `, start + section.length);
    text = text.slice(start, end < 0 ? undefined : end);
  }
  const files: Record<string, string> = {};
  for (const match of text.matchAll(/```ts\n\/\/ ([\w.-]+\.ts)\b[^\n]*\n([\s\S]*?)```/g)) {
    const name = match[1] as string;
    files[name] = `${files[name] ?? ""}${match[2]}`;
  }
  return files;
}

/** The body of the README's one fenced block whose first line is exactly `firstLine`. */
export function readmeBlock(firstLine: string): string {
  const text = readFileSync(README, "utf8");
  const start = text.indexOf(`\`\`\`ts\n${firstLine}\n`);
  if (start < 0) throw new Error(`README has no block starting ${firstLine}`);
  const body = start + `\`\`\`ts\n${firstLine}\n`.length;
  return text.slice(body, text.indexOf("```", body));
}
