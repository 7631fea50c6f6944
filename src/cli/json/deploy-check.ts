/** `soniq check-deploy --json`: one entry per worker found in the manifests, with its verdict. */
import { z } from "zod";

/** One worker's check. */
export const deployCheckJsonSchema = z.object({
  /** The manifest, as given. */
  file: z.string(),
  /** `kubernetes`, `compose` or `systemd`. */
  kind: z.string(),
  /** The worker's label in the manifest (a container, a service, a unit). */
  worker: z.string(),
  /** The supervisor's grace period, in seconds. */
  graceSeconds: z.number(),
  /** Where it came from (`terminationGracePeriodSeconds`, a default, …). */
  graceSource: z.string(),
  /** The drain budget it must cover, in seconds. */
  requiredSeconds: z.number(),
  /** The budget's sum, written out. */
  arithmetic: z.string(),
  fits: z.boolean(),
  notes: z.array(z.string()),
});
/** One worker's check (see {@link deployCheckJsonSchema}). */
export type DeployCheckJson = z.infer<typeof deployCheckJsonSchema>;

/** `soniq check-deploy --json`: every worker of every manifest. */
export const deployChecksJsonSchema = z.array(deployCheckJsonSchema);
