/** Helpers the adapters share: package versions, direct SQL for setup and clean-up. */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

/** The repository root (where package.json and dist/ are). */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The installed version of `pkg` (soniq: this repository's own package.json). */
export function packageVersion(pkg: string): string {
  const file =
    pkg === "soniq"
      ? join(REPO_ROOT, "package.json")
      : join(REPO_ROOT, "node_modules", pkg, "package.json");
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { version?: string }).version ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** Runs `fn` with a short-lived connection to `url`. */
export async function withClient<T>(
  url: string,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Runs `statements` one after another on a short-lived connection. */
export async function sql(url: string, ...statements: string[]): Promise<void> {
  await withClient(url, async (client) => {
    for (const text of statements) await client.query(text);
  });
}

/** `null` when PostgreSQL at `url` answers, else the error text. */
export async function checkPostgres(url: string): Promise<string | null> {
  try {
    await sql(url, "SELECT 1");
    return null;
  } catch (err) {
    return `PostgreSQL at ${url.replace(/\/\/[^@]*@/, "//")} is not reachable: ${String(err)}`;
  }
}
