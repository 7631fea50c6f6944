/**
 * The plans PostgreSQL picks for a statement as a prepared statement runs it: its custom plan (a
 * statement's first runs) and its generic plan (later runs), for the plan-stability tests.
 */
import type pg from "pg";

/** One plan of {@link preparedPlans}: the `plan_cache_mode` forced and the `EXPLAIN` text. */
export interface PreparedPlan {
  mode: "force_custom_plan" | "force_generic_plan";
  plan: string;
}

/**
 * `text` prepared as `name` with parameter `types` (`""`: none) and explained with `args` (SQL
 * literals, `""`: none), under each forced plan cache mode; deallocated afterwards.
 */
export async function preparedPlans(
  client: pg.Client,
  name: string,
  types: string,
  text: string,
  args: string,
): Promise<PreparedPlan[]> {
  await client.query(`PREPARE ${name}${types === "" ? "" : `(${types})`} AS ${text}`);
  const out: PreparedPlan[] = [];
  for (const mode of ["force_custom_plan", "force_generic_plan"] as const) {
    await client.query(`SET plan_cache_mode = ${mode}`);
    const { rows } = await client.query<{ "QUERY PLAN": string }>(
      `EXPLAIN (COSTS OFF) EXECUTE ${name}${args === "" ? "" : `(${args})`}`,
    );
    out.push({ mode, plan: rows.map((row) => row["QUERY PLAN"]).join("\n") });
  }
  await client.query(`DEALLOCATE ${name}`);
  return out;
}

/** {@link preparedPlans} as one text: each mode's name, then its plan. */
export async function preparedPlansText(
  client: pg.Client,
  name: string,
  types: string,
  text: string,
  args: string,
): Promise<string> {
  const plans = await preparedPlans(client, name, types, text, args);
  return plans.map(({ mode, plan }) => `${mode}:\n${plan}`).join("\n");
}
