/**
 * Job versions on the command line (issue 25 item 2): `soniq enqueue --module` stamps the
 * definition's version; `jobs show` prints it when it is not 1 (and `--json` always, as
 * `version`); without `--module` the job is version 1.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

afterAll(() => removeTempDirs());

const module = fileURLToPath(new URL("../fixtures/versioned-jobs.ts", import.meta.url));

describe("soniq enqueue / jobs show with a versioned job", () => {
  it("enqueue --module of a version-2 job › jobs show prints version 2; without --module › version 1", async () => {
    const env = { SONIQ_DATABASE_URL: `sqlite:${join(tempDir(), "v.db")}` };
    expect((await runCli(["setup"], env)).code).toBe(0);
    const withModule = await runCli(
      ["enqueue", "report.versioned", "--args", '{"n":1}', "--module", module],
      env,
    );
    expect(withModule.code, withModule.stderr).toBe(0);
    const v2 = withModule.stdout.trim();
    const plain = await runCli(["enqueue", "report.versioned", "--args", '{"n":2}'], env);
    expect(plain.code, plain.stderr).toBe(0);
    const v1 = plain.stdout.trim();

    const [showV2, showV2Json, showV1, showV1Json] = await Promise.all([
      runCli(["jobs", "show", v2], env),
      runCli(["jobs", "show", v2, "--json"], env),
      runCli(["jobs", "show", v1], env),
      runCli(["jobs", "show", v1, "--json"], env),
    ]);
    expect(showV2.code, showV2.stderr).toBe(0);
    expect(showV2.stdout).toMatch(/^name\s+report\.versioned {2}version 2$/m);
    expect(JSON.parse(showV2Json.stdout)).toMatchObject({ id: v2, version: 2 });
    expect(showV1.stdout).toMatch(/^name\s+report\.versioned$/m);
    expect(JSON.parse(showV1Json.stdout)).toMatchObject({ id: v1, version: 1 });
  }, 60_000);
});
